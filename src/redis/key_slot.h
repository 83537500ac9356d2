// Which of the 16384 Redis Cluster slots a key belongs to.
#ifndef FEEDCORE_REDIS_KEY_SLOT_H_
#define FEEDCORE_REDIS_KEY_SLOT_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace feedcore::redis {

inline constexpr uint16_t kSlotCount = 16384;

// CRC16 (XMODEM: polynomial 0x1021, initial value 0) of `bytes`, the
// checksum Redis Cluster hashes keys with.
uint16_t Crc16(std::string_view bytes);

// Continues a CRC16 whose value so far is `crc` over `bytes`:
// Crc16Continue(Crc16(a), b) == Crc16(a + b).
uint16_t Crc16Continue(uint16_t crc, std::string_view bytes);

// The slot of `key`: CRC16 of the key modulo 16384, or of its hash tag
// when it has one (the bytes between the first '{' and the first '}' after
// it, when there is at least one byte between them), so that keys sharing
// a tag share a slot.
uint16_t KeySlot(std::string_view key);

// The positions 0..slots.size()-1 ordered by their slot, keeping the given
// order within a slot: the positions of one slot come out adjacent, so a
// caller can send the keys of each slot in one command. O(n + kSlotCount).
std::vector<uint32_t> OrderBySlot(std::span<const uint16_t> slots);

}  // namespace feedcore::redis

#endif  // FEEDCORE_REDIS_KEY_SLOT_H_
