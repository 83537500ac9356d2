#include "redis/key_slot.h"

#include <array>

namespace feedcore::redis {
namespace {

constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();

}  // namespace

uint16_t Crc16Continue(uint16_t crc, std::string_view bytes) {
  for (unsigned char c : bytes) {
    crc = static_cast<uint16_t>((crc << 8) ^
                                kCrc16Table[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

uint16_t Crc16(std::string_view bytes) { return Crc16Continue(0, bytes); }

uint16_t KeySlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) % kSlotCount;
}

std::vector<uint32_t> OrderBySlot(std::span<const uint16_t> slots) {
  // A counting sort: where each slot's positions start, then place them.
  std::vector<uint32_t> start(kSlotCount + 1, 0);
  for (uint16_t slot : slots) ++start[slot + 1];
  for (size_t slot = 1; slot <= kSlotCount; ++slot) {
    start[slot] += start[slot - 1];
  }
  std::vector<uint32_t> order(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    order[start[slots[i]]++] = static_cast<uint32_t>(i);
  }
  return order;
}

}  // namespace feedcore::redis
