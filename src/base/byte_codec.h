// Little-endian fixed-width encoding for snapshots: a writer that appends
// to a string and a reader that never reads past its input.
//
// The reader does not throw or abort on bad input: the first read past the
// end (or a count that cannot fit in what is left) marks it failed, every
// later read returns zeros, and the caller checks ok() once at the end of a
// section. That keeps parsing code straight-line while a truncated or
// corrupted input can never cause an out-of-bounds read or a huge
// allocation.
#ifndef FEEDCORE_SRC_BASE_BYTE_CODEC_H_
#define FEEDCORE_SRC_BASE_BYTE_CODEC_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace feedcore::internal {

class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}

  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Fixed(v); }
  void U64(uint64_t v) { Fixed(v); }
  void I64(int64_t v) { Fixed(static_cast<uint64_t>(v)); }
  // A length-prefixed byte string.
  void Bytes(std::string_view bytes) {
    U64(bytes.size());
    out_->append(bytes.data(), bytes.size());
  }
  // LEB128: seven bits a byte, low first, high bit set on all but the last
  // (1 byte below 128, at most 10).
  void Var(uint64_t v) {
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out_->append(buf, n);
  }
  // Zigzag, then Var: small magnitudes of either sign stay short.
  void VarSigned(int64_t v) {
    Var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  // A byte string prefixed with its Var length.
  void VarBytes(std::string_view bytes) {
    Var(bytes.size());
    out_->append(bytes.data(), bytes.size());
  }

 private:
  template <typename T>
  void Fixed(T v) {
    char buf[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) {
      buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
    out_->append(buf, sizeof(T));
  }

  std::string* const out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  uint8_t U8() { return static_cast<uint8_t>(Fixed<uint8_t>()); }
  uint32_t U32() { return Fixed<uint32_t>(); }
  uint64_t U64() { return Fixed<uint64_t>(); }
  int64_t I64() { return static_cast<int64_t>(Fixed<uint64_t>()); }
  std::string_view Bytes() {
    const uint64_t n = U64();
    if (!ok_ || n > in_.size() - pos_) return Fail();
    std::string_view bytes = in_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }

  // ByteWriter::Var's encoding; fails on more than 10 bytes or bits beyond
  // 64.
  uint64_t Var() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || pos_ == in_.size()) break;
      const uint64_t byte = static_cast<unsigned char>(in_[pos_++]);
      if (shift == 63 && byte > 1) break;
      v |= (byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    Fail();
    return 0;
  }
  int64_t VarSigned() {
    const uint64_t v = Var();
    return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::string_view VarBytes() {
    const uint64_t n = Var();
    if (!ok_ || n > in_.size() - pos_) return Fail();
    std::string_view bytes = in_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }
  // As Count, with a Var count.
  uint64_t VarCount(size_t min_item_bytes) {
    return CheckCount(Var(), min_item_bytes);
  }

  // A count of items, each at least `min_item_bytes` long, that must fit in
  // what is left of the input; 0 (and failed) if it cannot. Reserve with
  // the result, never with an unchecked count.
  uint64_t Count(size_t min_item_bytes) {
    return CheckCount(U64(), min_item_bytes);
  }

 private:
  uint64_t CheckCount(uint64_t n, size_t min_item_bytes) {
    if (!ok_ || (min_item_bytes > 0 && n > remaining() / min_item_bytes)) {
      Fail();
      return 0;
    }
    return n;
  }

 public:
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  size_t remaining() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  std::string_view Fail() {
    ok_ = false;
    pos_ = in_.size();
    return {};
  }
  template <typename T>
  T Fixed() {
    if (!ok_ || in_.size() - pos_ < sizeof(T)) {
      Fail();
      return 0;
    }
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<T>(
          static_cast<T>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i));
    }
    pos_ += sizeof(T);
    return v;
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_BASE_BYTE_CODEC_H_
