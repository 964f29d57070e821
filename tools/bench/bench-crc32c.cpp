// Speed of csan's CRC-32C (core/crc32c.h), which checks every checkpoint on load and is
// computed over every checkpoint written: GB/s over a buffer that stays in the core's
// caches and over one that streams from memory (as a checkpoint in the page cache does).
//   bench-crc32c [--seconds 1]
#include <boost/program_options.hpp>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "repeat_timing.h"
#include "toolkit/core/crc32c.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  double seconds = 1;
  po::options_description options("bench-crc32c [options]");
  options.add_options()("help,h", "show this help")("seconds", po::value(&seconds)->default_value(1),
                                                     "time per buffer size");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-crc32c: error: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::printf("%s", (std::ostringstream() << options).str().c_str());
    return 0;
  }
  for (const auto& [name, bytes] : {std::pair<std::string, size_t>{"512 KiB (in cache)", size_t{512} << 10},
                                    std::pair<std::string, size_t>{"256 MiB (from memory)", size_t{256} << 20}}) {
    std::vector<unsigned char> buffer(bytes);
    for (size_t i = 0; i < bytes; ++i) buffer[i] = static_cast<unsigned char>(i * 131 + i / 7);
    uint32_t sink = 0;
    const auto r = csan::bench::repeat_for(seconds, [&] { sink ^= csan::crc32c(buffer.data(), buffer.size()); });
    // The CRC itself, so that two builds' outputs can be compared.
    std::printf("%-22s %6.2f GB/s  (crc %08x)\n", name.c_str(), double(bytes) * r.calls / r.seconds / 1e9,
                csan::crc32c(buffer.data(), buffer.size()) | (sink & 0));
  }
}
