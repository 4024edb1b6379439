import Glibc

/// An IPv4 or IPv6 address as 128 bits, IPv4 mapped into IPv6 (`::ffff:a.b.c.d`), so that one
/// comparison and one mask serve both families.
struct IPAddress: Sendable, Hashable {
    /// The first and last 64 bits, most significant first.
    var high: UInt64
    var low: UInt64

    /// Whether the address is an IPv4 address (mapped).
    var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// The address of an IPv4 `in_addr`.
    init(_ address: in_addr) {
        high = 0
        low = 0xFFFF_0000_0000 | UInt64(UInt32(bigEndian: address.s_addr))
    }

    /// The address of an IPv6 `in6_addr`.
    init(_ address: in6_addr) {
        var bytes = address
        (high, low) = withUnsafeBytes(of: &bytes) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// Parses an IPv4 or IPv6 literal (no brackets, no zone, no port); `nil` for anything else.
    /// Reads the bytes without allocating (it runs per request behind a proxy). A NUL byte makes
    /// it no address: `inet_pton` would stop there and read `1.2.3.4\0junk` as `1.2.3.4` (found
    /// by the forwarded fuzz target).
    init?(_ text: UnsafeBufferPointer<UInt8>) {
        guard !text.isEmpty, text.count <= Int(INET6_ADDRSTRLEN) - 1, let base = text.baseAddress,
            memchr(base, 0, text.count) == nil
        else { return nil }
        let parsed: IPAddress? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer in
            guard let cString = buffer.baseAddress else { return nil }
            UnsafeMutableRawPointer(cString).copyMemory(from: base, byteCount: text.count)
            cString[text.count] = 0
            var ipv4 = in_addr()
            if inet_pton(AF_INET, cString, &ipv4) == 1 { return IPAddress(ipv4) }
            var ipv6 = in6_addr()
            if inet_pton(AF_INET6, cString, &ipv6) == 1 { return IPAddress(ipv6) }
            return nil
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Parses an IPv4 or IPv6 literal given as a string.
    init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ IPAddress($0) }) else { return nil }
        self = parsed
    }

    /// The address with all but its first `prefixLength` bits (of 128) cleared.
    func masked(to prefixLength: Int) -> IPAddress {
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> UInt64(bits)) }
        var result = self
        result.high &= mask(prefixLength)
        result.low &= mask(prefixLength - 64)
        return result
    }

    /// The client this address counts as for the per-client limits (connections, event streams):
    /// an IPv4 address itself, an IPv6 address by its /64, since a host picks addresses freely
    /// inside its /64 (as the login throttle counts them).
    var client: IPAddress { isIPv4 ? self : masked(to: 64) }

    /// Whether the address is a loopback one: IPv4 127.0.0.0/8 (also mapped) or IPv6 `::1`.
    var isLoopback: Bool { isIPv4 ? (low >> 24) & 0xFF == 127 : high == 0 && low == 1 }

    /// The `in_addr` of an IPv4 address.
    var ipv4: in_addr { in_addr(s_addr: UInt32(truncatingIfNeeded: low).bigEndian) }

    /// The `in6_addr` of the address.
    var ipv6: in6_addr {
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { raw in
            raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return address
    }
}
