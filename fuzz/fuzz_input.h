// Turns a fuzz input into typed values, front to back. Once the bytes run
// out every value is zero (or empty), so a target always sees a complete,
// finite sequence of operations whatever the input's length.
//
// The same header builds with libFuzzer (clang) and with the plain replay
// driver of the regression tests (any compiler), which is why it does not
// use clang's FuzzedDataProvider.
#ifndef FEEDCORE_FUZZ_FUZZ_INPUT_H_
#define FEEDCORE_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace feedcore::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return empty() ? 0 : size_ - pos_; }

  uint8_t U8() { return empty() ? 0 : data_[pos_++]; }

  // Little-endian; missing bytes read as zero.
  uint64_t U64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t{U8()} << (8 * i);
    return value;
  }
  uint32_t U32() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= uint32_t{U8()} << (8 * i);
    return value;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  bool Bool() { return (U8() & 1) != 0; }

  // A value in [0, n) for n >= 1, from one byte when n fits in one.
  uint64_t Below(uint64_t n) {
    if (n <= 1) return 0;
    if (n <= 256) return U8() % n;
    return U64() % n;
  }

  // Up to `max` bytes, the length taken from the input first.
  std::string Bytes(size_t max) {
    const size_t length = static_cast<size_t>(Below(max + 1));
    const size_t n = length < remaining() ? length : remaining();
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }

  // The next `n` bytes, or what is left when fewer are.
  std::string Take(size_t n) {
    const size_t taken = n < remaining() ? n : remaining();
    std::string out(reinterpret_cast<const char*>(data_ + pos_), taken);
    pos_ += taken;
    return out;
  }

  // Everything not read yet.
  std::string Rest() {
    std::string out(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_FUZZ_INPUT_H_
