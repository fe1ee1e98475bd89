# shellcheck shell=bash
# The Debian packages a lent GPU machine needs (it has CUDA, cmake, ninja, gcc and PyTorch, but
# no Debian dev packages and no network), for scripts/gpu/device-debs.sh (building there) and
# scripts/gpu/device-bundle.sh (running programs built here). Sourced.
# Left out on purpose: packages such an image already has (libc6, libstdc++6, libgcc-s1,
# libgomp1, libatomic1, zlib1g, ...), and gnuplot (figures are made here from the database).

# build: headers, CMake package files, static parts
build_packages=(
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libfmt-dev nlohmann-json3-dev libcli11-dev
  doctest-dev libopenmpi-dev libsqlite3-dev libboost1.74-dev libboost-filesystem1.74-dev
  zlib1g-dev
)
# run: the shared libraries scalebench's programs and Open MPI's mpirun, orted and plugins load
# (`ldd` of each, mapped to packages with dpkg -S), minus those the image has
runtime_packages=(
  libdnnl2 ocl-icd-libopencl1 libfmt9 libsqlite3-0 libboost-filesystem1.74.0
  openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200
  libnl-route-3-200 libnuma1 libmunge2 libpsm-infinipath1 libpsm2-2
)
