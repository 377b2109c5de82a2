#pragma once

namespace kronex {

// clamped: an ordinary band matrix. periodic: the band wraps around, so A(0, n-1) and
// A(n-1, 0) (the corners) are in-band entries.
enum class boundary { clamped, periodic };

inline const char* to_string(boundary b) { return b == boundary::periodic ? "periodic" : "clamped"; }

} // namespace kronex
