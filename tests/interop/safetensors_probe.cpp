// The interoperability test's handle on csan's safetensors layer (safetensors_interop_test.py):
//   safetensors_probe write OUT SPEC.json   writes OUT from {"metadata": {..}, "tensors":
//                                           [{"name", "dtype", "shape", "hex", "streamed"}]}
//   safetensors_probe dump IN [--require-checksum]
//                                           prints {"checksummed", "metadata", "tensors":
//                                           [{"name", "dtype", "shape", "offset", "hex"}]} in
//                                           file order ("offset": in the file)
// Errors go to stderr as one line, exit code 1.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace {

using namespace csan::safetensors;
using json = nlohmann::json;

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2) throw csan::Error("odd hex length");
  std::string bytes(hex.size() / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

std::string to_hex(const char* data, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    const auto b = static_cast<unsigned char>(data[i]);
    hex += kHex[b >> 4];
    hex += kHex[b & 0xF];
  }
  return hex;
}

int write(const std::string& out, const std::string& spec_path) {
  const json spec = json::parse(csan::read_file(spec_path));
  Writer writer;
  const json metadata = spec.value("metadata", json::object());
  for (const auto& [key, value] : metadata.items()) writer.set_metadata(key, value.get<std::string>());
  std::vector<std::string> bytes;  // kept until write() returns
  bytes.reserve(spec["tensors"].size());
  for (const auto& t : spec["tensors"]) {
    const auto dtype = dtype_named(t["dtype"].get<std::string>());
    if (!dtype) throw csan::Error("unknown dtype " + t["dtype"].dump());
    bytes.push_back(from_hex(t["hex"].get<std::string>()));
    const std::string& data = bytes.back();
    if (t.value("streamed", false)) {
      // Three bytes at a time: pieces that cut elements apart.
      writer.add(t["name"].get<std::string>(), *dtype, t["shape"].get<std::vector<int64_t>>(),
                 [&data](const Writer::Sink& sink) {
                   for (size_t at = 0; at < data.size(); at += 3)
                     sink(data.data() + at, std::min<size_t>(3, data.size() - at));
                 });
    } else {
      writer.add(t["name"].get<std::string>(), *dtype, t["shape"].get<std::vector<int64_t>>(), data.data());
    }
  }
  writer.write(out);
  return 0;
}

int dump(const std::string& in, bool require_checksum) {
  const Reader reader(in, require_checksum ? ChecksumPolicy::kRequire : ChecksumPolicy::kVerifyIfPresent);
  json out = {{"checksummed", reader.checksummed()}, {"metadata", reader.metadata()}, {"tensors", json::array()}};
  for (const auto& t : reader.tensors())
    out["tensors"].push_back({{"name", t.name},
                              {"dtype", std::string(dtype_name(t.dtype))},
                              {"shape", t.shape},
                              {"offset", t.data - reader.mapping()->data()},
                              {"hex", to_hex(t.data, t.size)}});
  std::cout << out.dump() << "\n";
  return 0;
}

int probe_main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "write" && argc == 4) return write(argv[2], argv[3]);
  if (command == "dump" && (argc == 3 || (argc == 4 && std::string(argv[3]) == "--require-checksum")))
    return dump(argv[2], argc == 4);
  std::cerr << "usage: safetensors_probe write OUT SPEC.json | dump IN [--require-checksum]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("safetensors_probe", probe_main, argc, argv); }
