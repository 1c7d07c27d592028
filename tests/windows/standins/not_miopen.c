/* A DLL named MIOpen.dll that is not MIOpen: it lacks the probe symbol miopenGetVersion.
   Discovery must reject it, release it and report it. Built by tools/windows_lane.py. */
__declspec(dllexport) int notMiopen(void) { return 42; }
