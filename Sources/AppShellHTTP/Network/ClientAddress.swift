import Glibc

/// A client's IP address kept as the socket gave it, so that a request that never asks for it
/// does not pay for formatting it.
struct ClientAddress: Sendable {
    private enum Storage: Sendable {
        case ipv4(in_addr)
        case ipv6(in6_addr)
        case text(String)
    }

    private let storage: Storage

    /// The address of `address` (a `sockaddr_in` or `sockaddr_in6`), or an empty one.
    init(_ address: UnsafePointer<sockaddr>?) {
        guard let address else {
            storage = .text("")
            return
        }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            storage = .ipv4(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr })
        case AF_INET6:
            storage = .ipv6(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr })
        default:
            storage = .text("")
        }
    }

    /// An address given as text (requests made in tests).
    init(text: String) { storage = .text(text) }

    /// The address `address`, IPv4 ones (mapped) written as IPv4.
    init(_ address: IPAddress) {
        storage = address.isIPv4 ? .ipv4(address.ipv4) : .ipv6(address.ipv6)
    }

    /// The address in binary form; `nil` for an empty or unparsable one.
    var ipAddress: IPAddress? {
        switch storage {
        case .ipv4(let raw): return IPAddress(raw)
        case .ipv6(let raw): return IPAddress(raw)
        case .text(let text): return IPAddress(text)
        }
    }

    /// The client the per-client limits count the address as, as text: an IPv4 address, or an
    /// IPv6 address's /64 (`2001:db8:1:2::`); see `IPAddress.client`.
    var clientText: String {
        guard let address = ipAddress, !address.isIPv4 else { return text }
        return ClientAddress(address.client).text
    }

    /// The address as text, e.g. `127.0.0.1` or `::1`.
    var text: String {
        switch storage {
        case .text(let text): return text
        case .ipv4(let raw): return ClientAddress.dotted(raw)
        case .ipv6(var raw): return ClientAddress.format(AF_INET6, &raw)
        }
    }

    /// An IPv4 address in dotted decimal (`127.0.0.1`), written digit by digit: `inet_ntop` formats
    /// each byte with `sprintf`, 1 700 of an action's instructions (callgrind, bench/RESULTS.md).
    static func dotted(_ raw: in_addr) -> String {
        let value = UInt32(bigEndian: raw.s_addr)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buffer in
            var count = 0
            for shift in stride(from: 24, through: 0, by: -8) {
                let byte = UInt8(truncatingIfNeeded: value >> UInt32(shift))
                if byte >= 100 {
                    buffer[count] = UInt8(ascii: "0") + byte / 100
                    count += 1
                }
                if byte >= 10 {
                    buffer[count] = UInt8(ascii: "0") + byte / 10 % 10
                    count += 1
                }
                buffer[count] = UInt8(ascii: "0") + byte % 10
                count += 1
                if shift > 0 {
                    buffer[count] = UInt8(ascii: ".")
                    count += 1
                }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// `inet_ntop`'s text of `raw`, written on the stack (every action asks for it: two arrays
    /// made and mapped were 3 500 of an action's instructions, callgrind, the Performance article).
    private static func format<Raw>(_ family: Int32, _ raw: inout Raw) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
            let written = withUnsafeBytes(of: &raw) { address in
                buffer.baseAddress.flatMap { inet_ntop(family, address.baseAddress, $0, socklen_t(buffer.count)) }
            }
            guard let start = written else { return "" }
            return String(cString: start)
        }
    }
}
