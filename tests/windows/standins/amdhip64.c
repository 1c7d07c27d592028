/* Stand-in for AMD's HIP runtime DLL (amdhip64_7.dll / amdhip64_6.dll): the two symbols discovery
   and tests/windows use. Built with x86_64-w64-mingw32-gcc by tools/windows_lane.py. */
#ifndef HIP_RUNTIME_VERSION
#define HIP_RUNTIME_VERSION 70242042 /* major*1e7 + minor*1e5 + patch: 7.2.42042 */
#endif

__declspec(dllexport) int hipGetDeviceCount(int *count) {
    *count = 0;
    return 100; /* hipErrorNoDevice */
}

__declspec(dllexport) int hipRuntimeGetVersion(int *version) {
    *version = HIP_RUNTIME_VERSION;
    return 0;
}
