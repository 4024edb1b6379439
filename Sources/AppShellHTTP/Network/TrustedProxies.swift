/// The reverse proxies whose `X-Forwarded-For` is believed, as addresses or CIDR ranges.
///
/// A request's client address (`Request.clientAddress`) is its peer's address, unless the peer
/// is one of these proxies: then it is the right-most address of `X-Forwarded-For` that is not a
/// trusted proxy (each proxy appends the address it received the request from, so everything to
/// the left of the first untrusted hop was written by the client and proves nothing). A field
/// from an untrusted peer is never read. An entry that is not an address ends the walk: the
/// client is then the last trusted hop passed. With no proxies configured (the default) the
/// header is never looked at.
public struct TrustedProxies: Sendable, Equatable {
    private struct Range: Sendable, Equatable {
        let network: IPAddress
        /// Of 128 bits (an IPv4 `/n` is `/96+n`).
        let prefixLength: Int

        func contains(_ address: IPAddress) -> Bool { address.masked(to: prefixLength) == network }
    }

    private let ranges: [Range]
    /// The entries as configured.
    public let entries: [String]

    /// No trusted proxies: every request's client is its peer.
    public static let none = TrustedProxies(validated: [])

    private init(validated ranges: [Range]) {
        self.ranges = ranges
        entries = []
    }

    /// Proxies from entries such as `10.0.0.1`, `10.0.0.0/8`, `::1` or `fd00::/8`; throws naming
    /// the first entry that is not an address or a range.
    public init(_ entries: [String]) throws(HTTPServerError) {
        var ranges: [Range] = []
        for entry in entries {
            guard let range = TrustedProxies.parse(entry) else {
                throw HTTPServerError(
                    "\"\(entry)\" is not an IPv4 or IPv6 address or CIDR range (such as 10.0.0.0/8 or fd00::/8)")
            }
            ranges.append(range)
        }
        self.ranges = ranges
        self.entries = entries
    }

    private static func parse(_ entry: String) -> Range? {
        let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var length = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...width).contains(given) else {
                return nil
            }
            length = given
        }
        let prefixLength = address.isIPv4 ? 96 + length : length
        // A range written with host bits set (10.0.0.1/8) means the network it lies in.
        return Range(network: address.masked(to: prefixLength), prefixLength: prefixLength)
    }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` is a trusted proxy.
    func contains(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client behind `peer`: `peer` itself unless it is trusted, else what its
    /// `X-Forwarded-For` says (see the type's documentation). Allocates nothing.
    func client(of peer: ClientAddress, headers: HTTPHeaders) -> ClientAddress {
        guard !ranges.isEmpty, let peerAddress = peer.ipAddress, contains(peerAddress) else { return peer }
        // Read left to right, the answer is: the last untrusted hop; or, after an entry that is
        // not an address, the hop just right of it (the peer when it is last); or, when every
        // hop is trusted, the left-most.
        var leftMost: IPAddress?
        var answer: IPAddress?
        var afterGarbage = false
        var sawGarbageLast = false
        headers.forEachValue(named: "X-Forwarded-For") { value in
            TrustedProxies.forEachHop(value) { hop in
                guard let hop else {
                    afterGarbage = true
                    sawGarbageLast = true
                    answer = nil
                    return
                }
                sawGarbageLast = false
                if leftMost == nil { leftMost = hop }
                if !contains(hop) {
                    answer = hop
                    afterGarbage = false
                } else if afterGarbage {
                    answer = hop
                    afterGarbage = false
                }
            }
            return true
        }
        if sawGarbageLast { return peer }
        if let answer { return ClientAddress(answer) }
        if let leftMost { return ClientAddress(leftMost) }
        return peer
    }

    /// Whether `value[from..<to]` is nothing (when `allowingNone`; `from` may be `to + 1`, past an
    /// unclosed bracket, which is never a port) or `:` and digits.
    private static func isPort(_ value: UnsafeBufferPointer<UInt8>, from: Int, to: Int, allowingNone: Bool) -> Bool {
        if from > to { return false }
        if from == to { return allowingNone }
        guard value[from] == UInt8(ascii: ":") else { return false }
        return (from + 1..<to).allSatisfy { value[$0] >= 0x30 && value[$0] <= 0x39 }
    }

    /// Calls `body` with each comma-separated hop of an `X-Forwarded-For` value: its address, or
    /// `nil` for one that is not an address. `[v6]`, `[v6]:port` and `v4:port` are accepted (a
    /// port is digits; anything else after the address makes the hop not one).
    private static func forEachHop(_ value: UnsafeBufferPointer<UInt8>, _ body: (IPAddress?) -> Void) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
            var from = start
            var to = end
            while from < to && (value[from] == 0x20 || value[from] == 0x09) { from += 1 }
            while to > from && (value[to - 1] == 0x20 || value[to - 1] == 0x09) { to -= 1 }
            if from < to {
                if value[from] == UInt8(ascii: "[") {
                    var close = from + 1
                    while close < to && value[close] != UInt8(ascii: "]") { close += 1 }
                    // `[v6]` or `[v6]:port` only: an unclosed bracket, or anything but a port
                    // after it, is not an address (it had been read as the address inside).
                    guard TrustedProxies.isPort(value, from: close + 1, to: to, allowingNone: true) else {
                        body(nil)
                        start = end + 1
                        continue
                    }
                    from += 1
                    to = close
                } else {
                    var colons = 0
                    var lastColon = to
                    for index in from..<to where value[index] == UInt8(ascii: ":") {
                        colons += 1
                        lastColon = index
                    }
                    if colons == 1 {
                        guard TrustedProxies.isPort(value, from: lastColon, to: to, allowingNone: false) else {
                            body(nil)
                            start = end + 1
                            continue
                        }
                        to = lastColon
                    }
                }
                body(IPAddress(UnsafeBufferPointer(rebasing: value[from..<to])))
            } else if end < value.count || start > 0 {
                body(nil)  // an empty hop between commas
            }
            start = end + 1
        }
    }
}
