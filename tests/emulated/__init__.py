"""The emulated MIOpen + HIP device (device.py) and the tests that run the MIOpen engine on it."""
