# shellcheck shell=bash
# Sourced THERE (a lent GPU machine) after scripts/gpu/device-build.sh unpacked the Debian packages:
# library, program and Open MPI paths for the unpacked prefix, and the cuDNN/NCCL roots
# (CUDA's own under /usr/local/cuda, else the image's Python wheels).
: "${SB_DEPS:=/opt/scalebench-deps}"
export PATH="$SB_DEPS/usr/bin:/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="$SB_DEPS/usr/lib/x86_64-linux-gnu:$SB_DEPS/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$SB_DEPS/usr/include${CPATH:+:$CPATH}"
export LIBRARY_PATH="$SB_DEPS/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
# Open MPI finds its plugins, help files and wrapper data relative to OPAL_PREFIX.
export OPAL_PREFIX="$SB_DEPS/usr"
# PMIx (Debian's pmix2) does not relocate: its config file names its plugin directory under
# /usr, so point it at the unpacked one (checked with /usr's copies hidden: 2 ranks reduce, no
# missing-help-file banner).
export PMIX_MCA_mca_base_component_path="$SB_DEPS/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
# Open MPI's sysconfdir (/etc/openmpi) is absolute, so OPAL_PREFIX does not move it: read
# Debian's parameter file (it turns off UCX, OFI and openib) from the unpacked copy.
export OMPI_MCA_mca_base_param_files="$SB_DEPS/etc/openmpi/openmpi-mca-params.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ ! -e /usr/local/cuda/include/cudnn.h ] || [ ! -e /usr/local/cuda/include/nccl.h ]; then
  # The directory of the `nvidia` namespace package (site-packages/nvidia), if there is one.
  nvidia_dir=""
  for python in python3 /opt/torch/.venv/bin/python3; do
    nvidia_dir=$("$python" -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null) && break
  done
  if [ -n "$nvidia_dir" ]; then
    [ -e /usr/local/cuda/include/cudnn.h ] || export SCALEBENCH_CUDNN_ROOT="$nvidia_dir/cudnn"
    [ -e /usr/local/cuda/include/nccl.h ] || export SCALEBENCH_NCCL_ROOT="$nvidia_dir/nccl"
    export LD_LIBRARY_PATH="$nvidia_dir/cudnn/lib:$nvidia_dir/nccl/lib:$nvidia_dir/cublas/lib:$LD_LIBRARY_PATH"
  fi
fi
