// A main() for the search fuzz targets under GCC (no libFuzzer): runs every file of the
// directories given on the command line through LLVMFuzzerTestOneInput once, so ctest
// exercises the targets' code paths on their seed corpora. Exit 0 when all ran.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      // Every prefix too: truncated inputs are the parsers' commonest bad input.
      for (size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 64) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), n);
      }
      ++ran;
    }
  }
  std::printf("ran %zu seed inputs\n", ran);
  return ran > 0 ? 0 : 1;
}
