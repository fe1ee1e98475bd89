// scalebench: experiment file -> runs -> database -> statistics -> tables and figures.
#include <iostream>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
  return scalebench::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                  std::cerr);
}
