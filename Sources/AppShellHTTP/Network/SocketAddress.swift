import Glibc

/// Socket addresses from and to text.
enum SocketAddress {
    /// Fills `storage` with `host` (an IPv4 or IPv6 literal) and `port`; false when `host` is
    /// not a literal address.
    static func fill(_ storage: inout sockaddr_storage, host: String, port: Int) -> Bool {
        var ipv4 = sockaddr_in()
        if inet_pton(AF_INET, host, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: ipv4) { target.copyMemory(from: $0) }
            }
            return true
        }
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: ipv6) { target.copyMemory(from: $0) }
            }
            return true
        }
        return false
    }
}
