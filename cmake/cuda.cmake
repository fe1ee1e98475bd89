# CUDA is optional: the backend is built when nvcc, cuDNN and NCCL are all found.
# CUDA installs under /usr/local/cuda on our machines; nvcc is not on PATH there by default.
set(SCALEBENCH_HAVE_CUDA OFF)
if(SCALEBENCH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit)
    # SCALEBENCH_CUDNN_ROOT / SCALEBENCH_NCCL_ROOT (or the same environment variables) name
    # other installs, e.g. the nvidia-cudnn-cu13 / nvidia-nccl-cu13 Python wheels, which ship
    # include/ and lib/ with only versioned library names (libcudnn.so.9, libnccl.so.2).
    set(cudnn_root "${SCALEBENCH_CUDNN_ROOT}")
    if(NOT cudnn_root)
      set(cudnn_root "$ENV{SCALEBENCH_CUDNN_ROOT}")
    endif()
    set(nccl_root "${SCALEBENCH_NCCL_ROOT}")
    if(NOT nccl_root)
      set(nccl_root "$ENV{SCALEBENCH_NCCL_ROOT}")
    endif()
    find_path(CUDNN_INCLUDE_DIR cudnn.h
      HINTS ${cudnn_root}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
      HINTS ${cudnn_root}/lib ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    find_path(NCCL_INCLUDE_DIR nccl.h
      HINTS ${nccl_root}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
      HINTS ${nccl_root}/lib ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      # Machine code for the data-centre GPUs in use (T4 75, A100 80, A10/A40 86, L4/L40 89,
      # H100/H200 90, B200 100) and PTX of 100 for newer ones; set before enable_language, which
      # would otherwise pick nvcc's single default (sm_75 for nvcc 13) and leave the rest to JIT.
      # Only cuda_kernels.cu goes through nvcc: the list costs about 3.3 s of build (2.0 s for
      # one architecture, 5.3 s for these six, nvcc 13.0). -DCMAKE_CUDA_ARCHITECTURES=90 builds one.
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90-real 100)
      endif()
      enable_language(CUDA)
      set(SCALEBENCH_HAVE_CUDA ON)
      message(STATUS "scalebench: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                     "cuDNN ${CUDNN_LIBRARY}, NCCL ${NCCL_LIBRARY})")
    else()
      message(STATUS "scalebench: CUDA backend OFF (nvcc found; CUDA toolkit ${CUDAToolkit_FOUND}, "
                     "cudnn.h ${CUDNN_INCLUDE_DIR}, libcudnn ${CUDNN_LIBRARY}, nccl.h "
                     "${NCCL_INCLUDE_DIR}, libnccl ${NCCL_LIBRARY}; set SCALEBENCH_CUDNN_ROOT / "
                     "SCALEBENCH_NCCL_ROOT)")
    endif()
  else()
    message(STATUS "scalebench: CUDA backend OFF (no nvcc)")
  endif()
else()
  message(STATUS "scalebench: CUDA backend OFF (SCALEBENCH_CUDA=OFF)")
endif()
