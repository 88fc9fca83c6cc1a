// Names in the fixed-size records ranks exchange through the bootstrap (peer_info.h's PeerInfo,
// moe/rank_offer.h's RankOffer): written truncated and NUL-terminated, and checked on arrival,
// since a record from another process may hold a name without its NUL, which would run a reader
// past the field.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "dissect/common/error.h"

namespace dissect::bootstrap {

template <size_t N>
void copy_wire_name(char (&out)[N], const std::string& text) {
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Throws "<record> has an unterminated <field> name" unless `name` holds a NUL.
template <size_t N>
void check_wire_name(const char (&name)[N], const char* field, const std::string& record) {
  if (std::memchr(name, '\0', N) == nullptr) {
    throw Error(record + " has an unterminated " + field + " name");
  }
}

}  // namespace dissect::bootstrap
