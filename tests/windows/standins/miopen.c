/* Stand-in for MIOpen.dll: exports the probe symbol miopenGetVersion and, like the real one,
   imports from the HIP runtime DLL (amdhip64_7.dll), which Windows must find in *another* folder
   in TheRock's layout. The patch number comes from the HIP stand-in, so a test can tell that the
   dependency was really resolved. Built by tools/windows_lane.py. */
#include <stddef.h>

__declspec(dllimport) int hipRuntimeGetVersion(int *version);

__declspec(dllexport) int miopenGetVersion(size_t *major, size_t *minor, size_t *patch) {
    int hip = 0;
    hipRuntimeGetVersion(&hip);
    *major = 3;
    *minor = 5;
    *patch = (size_t)(hip % 100000);
    return 0;
}

__declspec(dllexport) const char *miopenGetErrorString(int status) {
    return status == 0 ? "miopenStatusSuccess" : "stand-in MIOpen.dll";
}
