// scalebench-tag, the torchrun launcher's per-worker tagging wrapper: orchestrator/tag_wrapper.hpp.
#include "orchestrator/tag_wrapper.hpp"

int main(int argc, char** argv) { return scalebench::orchestrator::run_tag_wrapper(argc, argv); }
