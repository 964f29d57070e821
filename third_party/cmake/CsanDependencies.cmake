# System packages and SentencePiece (see tools/install-deps.sh); nothing here is vendored.
find_package(Threads REQUIRED)

# LibTorch: Debian's 1.13 CPU build by default, or any 2.x (CUDA) via CMAKE_PREFIX_PATH.
find_package(Torch REQUIRED)
# TorchConfig.cmake may append its own flags (ABI macro) to CMAKE_CXX_FLAGS; keep them.
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")
# Treat LibTorch headers as system headers so -Wall -Wextra only reports our own code.
if(TARGET torch)
  get_target_property(_torch_inc torch INTERFACE_INCLUDE_DIRECTORIES)
  if(_torch_inc)
    set_target_properties(torch PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_torch_inc}")
  endif()
endif()

# at::parallel_for (ATen/ParallelOpenMP.h) splits its range over threads only in code that
# is compiled with OpenMP (#ifdef _OPENMP); elsewhere it runs the whole range on the calling
# thread. csan's own kernels (int8 products, fused attention and dropout, the vocabulary
# passes of the search, few-row products) use it, so they get OpenMP whenever this LibTorch
# parallelizes with OpenMP itself (Debian's 1.13 and the pip wheels do; both use libgomp).
# Without it int8 products on 2 threads ran at one thread's speed (bench-gemm --dtypes int8).
set(_torch_openmp "")
foreach(_dir ${TORCH_INCLUDE_DIRS})
  if(NOT _torch_openmp AND EXISTS "${_dir}/ATen/Config.h")
    file(STRINGS "${_dir}/ATen/Config.h" _torch_openmp REGEX "#define AT_PARALLEL_OPENMP 1")
  endif()
endforeach()
if(_torch_openmp)
  find_package(OpenMP COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    # Every target from here on (LibTorch's imported target ignores an appended link interface).
    link_libraries(OpenMP::OpenMP_CXX)
  else()
    message(WARNING "LibTorch parallelizes with OpenMP but this compiler has none: csan's own kernels run on one thread")
  endif()
endif()

# c10d declares its NCCL process group only under USE_C10D_NCCL; CUDA builds of LibTorch
# ship it (distributed training on GPUs). Gloo is detected in the source (__has_include).
# Its header includes nccl.h, which a pip-installed torch keeps in the nvidia-nccl wheel
# beside it (site-packages/nvidia/nccl/include) rather than in its own include folder.
if(TORCH_CUDA_LIBRARIES)
  get_filename_component(_torch_site_packages "${Torch_DIR}/../../../.." ABSOLUTE)
  find_path(CSAN_NCCL_INCLUDE_DIR nccl.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} "${_torch_site_packages}/nvidia/nccl/include" ENV NCCL_INCLUDE_DIR)
  if(CSAN_NCCL_INCLUDE_DIR)
    add_compile_definitions(USE_C10D_NCCL)
    include_directories(SYSTEM ${CSAN_NCCL_INCLUDE_DIR})
  else()
    message(WARNING "CUDA LibTorch without nccl.h (set NCCL_INCLUDE_DIR): GPU data-parallel training is left out")
  endif()
endif()

find_package(yaml-cpp REQUIRED)
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp INTERFACE IMPORTED)
  target_link_libraries(yaml-cpp::yaml-cpp INTERFACE yaml-cpp)
endif()

find_package(Boost REQUIRED COMPONENTS program_options)

include(CsanSentencePiece)  # csan::sentencepiece, built by tools/install-deps.sh

find_package(GTest)

# Header-only JSON library: the components read and write their JSON files with it; the
# tests also read ../shared/vectors with it.
find_package(nlohmann_json 3 REQUIRED)
