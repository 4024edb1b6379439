/// The host names a server answers for: a request for any other host is refused (421) before
/// its responder runs, so that a page on a foreign name that resolves to this server (DNS
/// rebinding) cannot read from it or act through it — the `Origin` check alone compares the
/// page's origin with the `Host` the same browser sent, which agree.
///
/// An entry is a name (`app.example.com`), `.example.com` (that name and every name under it) or
/// `*.example.com` (only the names under it). Names compare case-insensitively, a trailing dot
/// ignored; ports are not compared (a rebinding page uses the server's own port anyway).
/// Always served, whatever the list: the loopback names `localhost`, `127.0.0.1` and `[::1]`,
/// and any IP address literal — rebinding needs a name the attacker controls, and a browser that
/// asks for an address connects to that address — so health checks by address keep working.
/// A request without `Host` (HTTP/1.0; no browser omits it) is served; one with two is 400.
/// An absolute-form target (`GET http://host/path`) names its host itself and is checked instead.
public struct AllowedHosts: Sendable, Equatable {
    private enum Pattern: Sendable, Equatable {
        /// Exactly this name.
        case name([UInt8])
        /// This name and every name under it (`.example.com`).
        case domain([UInt8])
        /// Only the names under this one (`*.example.com`).
        case subdomains([UInt8])
    }

    private let patterns: [Pattern]
    /// The configured entries (the loopback names are served besides them).
    public let entries: [String]

    /// The names always served.
    public static let loopbackNames = ["localhost", "127.0.0.1", "[::1]"]

    /// Only the loopback names and IP addresses.
    public static let loopback = AllowedHosts(validated: [])

    private init(validated entries: [String]) {
        self.entries = entries
        patterns = (AllowedHosts.loopbackNames + entries).compactMap(AllowedHosts.parse)
    }

    /// The loopback names, IP addresses and `entries`; throws naming the first entry that is not
    /// a host name, an IP address or a `.domain`/`*.domain` pattern (a port is refused: ports
    /// are not compared).
    public init(_ entries: [String]) throws(HTTPServerError) {
        for entry in entries where AllowedHosts.parse(entry) == nil {
            throw HTTPServerError(
                "\"\(entry)\" is not a host name (letters, digits, hyphens and dots, no port), an IP address, "
                    + "or a .example.com or *.example.com pattern")
        }
        self.init(validated: entries)
    }

    private static func parse(_ entry: String) -> Pattern? {
        var text = entry.lowercased()
        if text.hasSuffix(".") && !text.hasSuffix("..") { text.removeLast() }
        if IPAddress(text) != nil {
            // A bare IPv6 literal is written as it appears in Host.
            return .name(Array((text.contains(":") ? "[\(text)]" : text).utf8))
        }
        if text.hasPrefix("["), text.hasSuffix("]"), IPAddress(String(text.dropFirst().dropLast())) != nil {
            return .name(Array(text.utf8))
        }
        if text.hasPrefix("*.") {
            let rest = String(text.dropFirst(2))
            return isHostName(rest) ? .subdomains(Array(rest.utf8)) : nil
        }
        if text.hasPrefix(".") {
            let rest = String(text.dropFirst())
            return isHostName(rest) ? .domain(Array(rest.utf8)) : nil
        }
        return isHostName(text) ? .name(Array(text.utf8)) : nil
    }

    /// Whether `text` is a DNS name: labels of 1–63 letters, digits and hyphens, not starting or
    /// ending with a hyphen, at most 253 bytes.
    private static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { byte in
                    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                }
        }
    }

    /// Why `request` must be refused, or `nil` when its host is served. Compares bytes: nothing
    /// is allocated for a request whose host is allowed.
    public func refusal(for request: Request) -> HTTPError? {
        if let first = request.target.utf8.first, first != UInt8(ascii: "/") {
            var target = request.target
            return target.withUTF8 { target in
                guard let authority = AllowedHosts.authority(ofAbsolute: target) else {
                    return .badRequest("the request target must be a path or an http(s) URL with a host")
                }
                return refusal(forHost: authority)
            }
        }
        var count = 0
        var found: HTTPError?
        request.headers.forEachValue(named: "Host") { value in
            count += 1
            if count == 1 { found = refusal(forHost: value) }
            return true
        }
        if count > 1 { return .badRequest("the request has more than one Host header") }
        return found
    }

    /// The authority of an `http://` or `https://` target, without userinfo (refused: `nil`).
    private static func authority(ofAbsolute target: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var index = 0
        while index < target.count && target[index] != UInt8(ascii: ":") { index += 1 }
        let scheme = String(decoding: UnsafeBufferPointer(rebasing: target[0..<index]), as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https", index + 3 <= target.count,
            target[index + 1] == UInt8(ascii: "/"), target[index + 2] == UInt8(ascii: "/")
        else { return nil }
        let start = index + 3
        var end = start
        while end < target.count, target[end] != UInt8(ascii: "/"), target[end] != UInt8(ascii: "?"),
            target[end] != UInt8(ascii: "#")
        {
            if target[end] == UInt8(ascii: "@") { return nil }
            end += 1
        }
        return end > start ? UnsafeBufferPointer(rebasing: target[start..<end]) : nil
    }

    /// Why a request for `value` (a `Host` field: host and optional port) is refused, or `nil`.
    private func refusal(forHost value: UnsafeBufferPointer<UInt8>) -> HTTPError? {
        // An empty Host is what a client sends for a target without authority: nothing to check.
        guard !value.isEmpty else { return nil }
        var end = value.count
        if value[0] == UInt8(ascii: "[") {
            var close = 1
            while close < value.count && value[close] != UInt8(ascii: "]") { close += 1 }
            guard close < value.count, AllowedHosts.isPort(value, from: close + 1) else { return misdirected(value) }
            end = close + 1
        } else {
            var colon = value.count
            for index in 0..<value.count where value[index] == UInt8(ascii: ":") { colon = index }
            if colon < value.count {
                guard AllowedHosts.isPort(value, from: colon) else { return misdirected(value) }
                end = colon
            }
        }
        if end > 1 && value[end - 1] == UInt8(ascii: ".") { end -= 1 }
        let host = UnsafeBufferPointer(rebasing: value[0..<end])
        guard !host.isEmpty else { return misdirected(value) }
        for pattern in patterns where AllowedHosts.matches(pattern, host) { return nil }
        if host[0] == UInt8(ascii: "[") {
            if IPAddress(UnsafeBufferPointer(rebasing: host[1..<(host.count - 1)])) != nil { return nil }
        } else if host.allSatisfy({ $0 == UInt8(ascii: ".") || ($0 >= 0x30 && $0 <= 0x39) }), IPAddress(host) != nil {
            return nil
        }
        return misdirected(value)
    }

    /// Whether `value[from...]` is empty or `:` and digits.
    private static func isPort(_ value: UnsafeBufferPointer<UInt8>, from: Int) -> Bool {
        guard from < value.count else { return true }
        guard value[from] == UInt8(ascii: ":") else { return false }
        return value[(from + 1)...].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private func misdirected(_ value: UnsafeBufferPointer<UInt8>) -> HTTPError {
        var shown = String(decoding: value.prefix(100), as: UTF8.self)
        if value.count > 100 { shown += "…" }
        return HTTPError(
            .misdirectedRequest,
            "this server does not serve the host \"\(shown)\"; its operator can add it to allowedHosts")
    }

    private static func matches(_ pattern: Pattern, _ host: UnsafeBufferPointer<UInt8>) -> Bool {
        switch pattern {
        case .name(let name):
            return equalIgnoringCase(host, name[...])
        case .domain(let name):
            return equalIgnoringCase(host, name[...]) || isUnder(host, name)
        case .subdomains(let name):
            return isUnder(host, name)
        }
    }

    /// Whether `host` ends with `.` and `name`, with at least one byte before the dot.
    private static func isUnder(_ host: UnsafeBufferPointer<UInt8>, _ name: [UInt8]) -> Bool {
        guard host.count > name.count + 1 else { return false }
        let dot = host.count - name.count - 1
        return host[dot] == UInt8(ascii: ".")
            && equalIgnoringCase(UnsafeBufferPointer(rebasing: host[(dot + 1)...]), name[...])
    }

    /// ASCII case-insensitive comparison; `lowercase` is already lowercase.
    private static func equalIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == lowercase.count else { return false }
        var index = lowercase.startIndex
        for byte in bytes {
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            if lowered != lowercase[index] { return false }
            index += 1
        }
        return true
    }
}
