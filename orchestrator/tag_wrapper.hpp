// scalebench-tag: runs one worker of a launcher that cannot tag its workers' output without
// delay (torchrun: its --tee copies a log file it polls every 0.1 s), and passes every chunk the
// worker writes, stdout and stderr, on to its own stdout at once with Open MPI's
// `[1,RANK]<stdout>:` / `[1,RANK]<stderr>:` tag (orchestrator/tag_output.hpp), as `mpirun
// --tag-output` does. Both streams go to stdout so that no launcher pipe polls them; the tag keeps
// the stream. docs/launchers.md.
//
//   scalebench-tag [--rank N] [--python INTERPRETER] [--] PROGRAM ARGS...
//
// The rank: --rank, else RANK (torchrun), OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, else 0.
// --python runs `INTERPRETER -u PROGRAM ARGS`, as torchrun runs a script. The worker's stdout is
// a pseudo-terminal when ours is one (line-buffered C stdio, as without the wrapper), else a pipe.
// Exit status: the worker's (a worker ended by a signal ends the wrapper by the same signal); 127
// when it could not be started. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to the worker,
// which runs in its own process group and dies with the wrapper. Once the worker has exited, the
// wrapper does not wait for descendants that still hold its pipes (2 s at most).
//
// A poll loop over two descriptors rather than Boost.Process: each chunk must be written the
// moment it is read, in writes of at most PIPE_BUF that each begin with a tag (ranks share the
// launcher's pipe), which is this loop and nothing more.
#pragma once

namespace scalebench::orchestrator {

// The whole of scalebench-tag: parses `argv` as above, runs the worker and returns the exit
// status (or ends by the worker's signal). cli/tag_main.cpp is its main.
int run_tag_wrapper(int argc, char** argv);

}  // namespace scalebench::orchestrator
