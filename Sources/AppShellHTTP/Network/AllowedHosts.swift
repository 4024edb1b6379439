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
/// An absolute-form target (`GET http://host/path`) names its host itself: `Request` makes that
/// authority its `Host` field, so it is what is checked.
public struct AllowedHosts: Sendable, Equatable {
    private enum Pattern: Sendable, Equatable {
        /// Exactly this name.
        case name([UInt8])
        /// This name and every name under it (`.example.com`).
        case domain([UInt8])
        /// Only the names under this one (`*.example.com`).
        case subdomains([UInt8])
    }

    /// How a span of `names` matches.
    private enum Kind: UInt8, Sendable {
        case name, domain, subdomains
    }

    /// One pattern as a range of the table's names: a trivial value.
    private struct Span: Sendable, Equatable {
        let start: Int
        let count: Int
        let kind: Kind
    }

    /// The patterns, in memory that never changes once made: one reference for the struct to
    /// carry (the check runs on every request, and each reference a copy carries is a retain).
    private final class Table: @unchecked Sendable {
        // @unchecked: written only in init, read-only after.
        let entries: [String]
        /// Every pattern's lowercased name, one after another.
        let names: UnsafeMutableBufferPointer<UInt8>
        let spans: UnsafeMutableBufferPointer<Span>

        init(entries: [String], names: [UInt8], spans: [Span]) {
            self.entries = entries
            self.names = Table.copy(names)
            self.spans = Table.copy(spans)
        }

        /// `elements` in new memory of exactly their count (a buffer of none has no memory).
        private static func copy<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
            guard !elements.isEmpty else { return UnsafeMutableBufferPointer(start: nil, count: 0) }
            let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
            _ = buffer.initialize(from: elements)
            return buffer
        }

        deinit {
            // Both element types are trivial: nothing to deinitialize.
            if names.baseAddress != nil { names.deallocate() }
            if spans.baseAddress != nil { spans.deallocate() }
        }
    }

    private let table: Table
    /// The configured entries (the loopback names are served besides them).
    public var entries: [String] { table.entries }

    /// Whether both serve the same entries.
    public static func == (lhs: AllowedHosts, rhs: AllowedHosts) -> Bool { lhs.entries == rhs.entries }

    /// The names always served.
    public static let loopbackNames = ["localhost", "127.0.0.1", "[::1]"]

    /// Only the loopback names and IP addresses.
    public static let loopback = AllowedHosts(validated: [])

    private init(validated entries: [String]) {
        var names: [UInt8] = []
        var spans: [Span] = []
        for pattern in (AllowedHosts.loopbackNames + entries).compactMap(AllowedHosts.parse) {
            let (kind, name): (Kind, [UInt8])
            switch pattern {
            case .name(let bytes): (kind, name) = (.name, bytes)
            case .domain(let bytes): (kind, name) = (.domain, bytes)
            case .subdomains(let bytes): (kind, name) = (.subdomains, bytes)
            }
            spans.append(Span(start: names.count, count: name.count, kind: kind))
            names.append(contentsOf: name)
        }
        table = Table(entries: entries, names: names, spans: spans)
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
        var count = 0
        var served = true
        request.headers.forEachValue(named: "Host") { value in
            count += 1
            if count == 1 { served = serves(value) }
            return true
        }
        if count > 1 { return .badRequest("the request has more than one Host header") }
        if served { return nil }
        var refusal: HTTPError?
        request.headers.forEachValue(named: "Host") { value in
            refusal = misdirected(value)
            return false
        }
        return refusal
    }

    /// Whether a request for `value` (a `Host` field: host and optional port) is served.
    private func serves(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        // An empty Host is what a client sends for a target without authority: nothing to check.
        guard let bytes = value.baseAddress, value.count > 0 else { return true }
        let count = value.count
        // The host ends where the port (`:` and digits) begins: after `]` for an IPv6 literal,
        // else at the last `:`.
        var end = count
        if bytes[0] == UInt8(ascii: "[") {
            var close = 1
            while close < count && bytes[close] != UInt8(ascii: "]") { close += 1 }
            guard close < count else { return false }
            end = close + 1
            if end < count {
                guard bytes[end] == UInt8(ascii: ":") else { return false }
                for index in (end + 1)..<count where bytes[index] < 0x30 || bytes[index] > 0x39 { return false }
            }
        } else {
            var index = count - 1
            while index > 0 && bytes[index] >= 0x30 && bytes[index] <= 0x39 { index -= 1 }
            if bytes[index] == UInt8(ascii: ":") { end = index }
        }
        if end > 1 && bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
        guard end > 0 else { return false }
        let host = UnsafeBufferPointer(start: bytes, count: end)
        if matchesAnyPattern(host) { return true }
        if bytes[0] == UInt8(ascii: "[") {
            return end > 2 && IPAddress(UnsafeBufferPointer(start: bytes + 1, count: end - 2)) != nil
        }
        return host.allSatisfy({ $0 == UInt8(ascii: ".") || ($0 >= 0x30 && $0 <= 0x39) }) && IPAddress(host) != nil
    }

    private func misdirected(_ value: UnsafeBufferPointer<UInt8>) -> HTTPError {
        var shown = String(decoding: value.prefix(100), as: UTF8.self)
        if value.count > 100 { shown += "…" }
        return HTTPError(
            .misdirectedRequest,
            "this server does not serve the host \"\(shown)\"; its operator can add it to allowedHosts")
    }

    /// Whether `host` matches one of the patterns.
    private func matchesAnyPattern(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let names = UnsafePointer(table.names.baseAddress) else { return false }
        for span in table.spans {
            let name = UnsafeBufferPointer(start: names + span.start, count: span.count)
            switch span.kind {
            case .name:
                if AllowedHosts.equalIgnoringCase(host, name) { return true }
            case .domain:
                if AllowedHosts.equalIgnoringCase(host, name) || AllowedHosts.isUnder(host, name) { return true }
            case .subdomains:
                if AllowedHosts.isUnder(host, name) { return true }
            }
        }
        return false
    }

    /// Whether `host` ends with `.` and `name`, with at least one byte before the dot.
    private static func isUnder(_ host: UnsafeBufferPointer<UInt8>, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard host.count > name.count + 1 else { return false }
        let dot = host.count - name.count - 1
        guard let base = host.baseAddress, base[dot] == UInt8(ascii: ".") else { return false }
        return equalIgnoringCase(UnsafeBufferPointer(start: base + dot + 1, count: name.count), name)
    }

    /// ASCII case-insensitive comparison; `lowercase` is already lowercase.
    private static func equalIgnoringCase(
        _ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard bytes.count == lowercase.count, let left = bytes.baseAddress, let right = lowercase.baseAddress else {
            return bytes.count == lowercase.count
        }
        var index = 0
        while index < bytes.count {
            let byte = left[index]
            // Clients nearly always send the name in lowercase: fold only on a difference.
            if byte != right[index] {
                guard byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte + 32 == right[index] else {
                    return false
                }
            }
            index += 1
        }
        return true
    }
}
