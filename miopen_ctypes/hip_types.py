"""C types of the few HIP runtime calls the engines need (layouts from hip_runtime_api.h).

``hipDeviceProp_t`` is, as in the header (``#define hipDeviceProp_t hipDeviceProp_tR0600``), the
struct ``hipDeviceProp_tR0600`` (1472 bytes, identical in the ROCm 6.4.3 and 7.2.4 headers), laid
out field by field; only ``arch`` (a word of 1-bit flags, ``hipDeviceArch_t``) is kept as one
``c_uint``. ``hipGetDeviceProperties`` is likewise a macro for the exported symbol
``hipGetDevicePropertiesR0600``, which is what ``hip.py`` binds. Every layout, enum value and
prototype here is checked against the real headers by tests/conformance/test_hip_conformance.py.

    >>> import ctypes
    >>> ctypes.sizeof(hipDeviceProp_t), hipDeviceProp_t.gcnArchName.offset
    (1472, 1160)
"""

from __future__ import annotations

from ctypes import POINTER, Structure, c_char, c_int, c_size_t, c_uint, c_void_p
from enum import IntEnum
from typing import Any

__all__ = [
    "hipDeviceAttribute_t",
    "hipDeviceProp_t",
    "hipDeviceProp_tR0600",
    "hipEvent_t",
    "hipMemcpyKind",
    "hipMemoryType",
    "hipPointerAttribute_t",
    "hipSuccess",
    "hipUUID",
    "ihipEvent_t",
]

hipSuccess = 0

# hipEvent_t: a distinct opaque pointer, so a stream passed as an event is an ArgumentError.
ihipEvent_t = type("ihipEvent_t", (Structure,), {"_fields_": []})
hipEvent_t: Any = POINTER(ihipEvent_t)
hipEvent_t.__name__ = "hipEvent_t"


class hipMemcpyKind(IntEnum):
    """``hipMemcpyKind`` (unsigned int)."""

    hipMemcpyHostToHost = 0
    hipMemcpyHostToDevice = 1
    hipMemcpyDeviceToHost = 2
    hipMemcpyDeviceToDevice = 3
    hipMemcpyDefault = 4
    hipMemcpyDeviceToDeviceNoCU = 1024


class hipMemoryType(IntEnum):
    """``hipMemoryType`` as reported in ``hipPointerAttribute_t.type``."""

    hipMemoryTypeUnregistered = 0
    hipMemoryTypeHost = 1
    hipMemoryTypeDevice = 2
    hipMemoryTypeManaged = 3
    hipMemoryTypeArray = 10
    hipMemoryTypeUnified = 11


class hipDeviceAttribute_t(IntEnum):
    """The ``hipDeviceAttribute_t`` members we query (same values in HIP 6.4 and 7.2)."""

    hipDeviceAttributeClockRate = 5
    hipDeviceAttributeL2CacheSize = 19
    hipDeviceAttributeComputeCapabilityMajor = 23
    hipDeviceAttributeComputeCapabilityMinor = 61
    hipDeviceAttributeMultiprocessorCount = 63
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74
    hipDeviceAttributeTotalGlobalMem = 84
    hipDeviceAttributeWarpSize = 87


class hipUUID(Structure):
    """``hipUUID``: ``{char bytes[16];}``."""

    _fields_ = [("bytes", c_char * 16)]


class hipPointerAttribute_t(Structure):
    """``{hipMemoryType type; int device; void* devicePointer; void* hostPointer; int isManaged;
    unsigned allocationFlags;}`` -- 32 bytes (HIP 6+)."""

    _fields_ = [
        ("type", c_uint),
        ("device", c_int),
        ("devicePointer", c_void_p),
        ("hostPointer", c_void_p),
        ("isManaged", c_int),
        ("allocationFlags", c_uint),
    ]


class hipDeviceProp_tR0600(Structure):
    """``hipDeviceProp_t`` (HIP >= 6); ``props.gcnArchName`` is e.g. ``b"gfx942:sramecc+:xnack-"``."""

    _fields_ = [
        ("name", c_char * 256), ("uuid", hipUUID), ("luid", c_char * 8),
        ("luidDeviceNodeMask", c_uint), ("totalGlobalMem", c_size_t),
        ("sharedMemPerBlock", c_size_t), ("regsPerBlock", c_int), ("warpSize", c_int),
        ("memPitch", c_size_t), ("maxThreadsPerBlock", c_int), ("maxThreadsDim", c_int * 3),
        ("maxGridSize", c_int * 3), ("clockRate", c_int), ("totalConstMem", c_size_t),
        ("major", c_int), ("minor", c_int), ("textureAlignment", c_size_t),
        ("texturePitchAlignment", c_size_t), ("deviceOverlap", c_int),
        ("multiProcessorCount", c_int), ("kernelExecTimeoutEnabled", c_int), ("integrated", c_int),
        ("canMapHostMemory", c_int), ("computeMode", c_int), ("maxTexture1D", c_int),
        ("maxTexture1DMipmap", c_int), ("maxTexture1DLinear", c_int), ("maxTexture2D", c_int * 2),
        ("maxTexture2DMipmap", c_int * 2), ("maxTexture2DLinear", c_int * 3),
        ("maxTexture2DGather", c_int * 2), ("maxTexture3D", c_int * 3),
        ("maxTexture3DAlt", c_int * 3), ("maxTextureCubemap", c_int),
        ("maxTexture1DLayered", c_int * 2), ("maxTexture2DLayered", c_int * 3),
        ("maxTextureCubemapLayered", c_int * 2), ("maxSurface1D", c_int),
        ("maxSurface2D", c_int * 2), ("maxSurface3D", c_int * 3),
        ("maxSurface1DLayered", c_int * 2), ("maxSurface2DLayered", c_int * 3),
        ("maxSurfaceCubemap", c_int), ("maxSurfaceCubemapLayered", c_int * 2),
        ("surfaceAlignment", c_size_t), ("concurrentKernels", c_int), ("ECCEnabled", c_int),
        ("pciBusID", c_int), ("pciDeviceID", c_int), ("pciDomainID", c_int), ("tccDriver", c_int),
        ("asyncEngineCount", c_int), ("unifiedAddressing", c_int), ("memoryClockRate", c_int),
        ("memoryBusWidth", c_int), ("l2CacheSize", c_int), ("persistingL2CacheMaxSize", c_int),
        ("maxThreadsPerMultiProcessor", c_int), ("streamPrioritiesSupported", c_int),
        ("globalL1CacheSupported", c_int), ("localL1CacheSupported", c_int),
        ("sharedMemPerMultiprocessor", c_size_t), ("regsPerMultiprocessor", c_int),
        ("managedMemory", c_int), ("isMultiGpuBoard", c_int), ("multiGpuBoardGroupID", c_int),
        ("hostNativeAtomicSupported", c_int), ("singleToDoublePrecisionPerfRatio", c_int),
        ("pageableMemoryAccess", c_int), ("concurrentManagedAccess", c_int),
        ("computePreemptionSupported", c_int), ("canUseHostPointerForRegisteredMem", c_int),
        ("cooperativeLaunch", c_int), ("cooperativeMultiDeviceLaunch", c_int),
        ("sharedMemPerBlockOptin", c_size_t), ("pageableMemoryAccessUsesHostPageTables", c_int),
        ("directManagedMemAccessFromHost", c_int), ("maxBlocksPerMultiProcessor", c_int),
        ("accessPolicyMaxWindowSize", c_int), ("reservedSharedMemPerBlock", c_size_t),
        ("hostRegisterSupported", c_int), ("sparseHipArraySupported", c_int),
        ("hostRegisterReadOnlySupported", c_int), ("timelineSemaphoreInteropSupported", c_int),
        ("memoryPoolsSupported", c_int), ("gpuDirectRDMASupported", c_int),
        ("gpuDirectRDMAFlushWritesOptions", c_uint), ("gpuDirectRDMAWritesOrdering", c_int),
        ("memoryPoolSupportedHandleTypes", c_uint), ("deferredMappingHipArraySupported", c_int),
        ("ipcEventSupported", c_int), ("clusterLaunch", c_int), ("unifiedFunctionPointers", c_int),
        ("reserved", c_int * 63), ("hipReserved", c_int * 32), ("gcnArchName", c_char * 256),
        ("maxSharedMemoryPerMultiProcessor", c_size_t), ("clockInstructionRate", c_int),
        ("arch", c_uint), ("hdpMemFlushCntl", c_void_p), ("hdpRegFlushCntl", c_void_p),
        ("cooperativeMultiDeviceUnmatchedFunc", c_int),
        ("cooperativeMultiDeviceUnmatchedGridDim", c_int),
        ("cooperativeMultiDeviceUnmatchedBlockDim", c_int),
        ("cooperativeMultiDeviceUnmatchedSharedMem", c_int), ("isLargeBar", c_int),
        ("asicRevision", c_int),
    ]


#: ``#define hipDeviceProp_t hipDeviceProp_tR0600`` (hip_runtime_api.h, HIP >= 6).
hipDeviceProp_t = hipDeviceProp_tR0600
