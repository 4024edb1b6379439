import Glibc

/// The request's cookies, read from the `Cookie` field's bytes: one cookie without building them all.
extension Request {
    /// The value of the cookie `name`, found without building the whole dictionary (the session
    /// cookie is read on every request); the first of a repeated name wins.
    public func cookie(named name: String) -> String? {
        var found: String?
        withCookie(named: name) { found = String(decoding: $0, as: UTF8.self) }
        return found
    }

    /// Calls `body` with the bytes of the cookie `name`, if there is one, without making a string
    /// of them: for a value that is parsed at once, such as a session id. (Not generic, so that a
    /// caller in another module pays nothing for it at run time.)
    public func withCookie(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        forEachCookie(named: name) { value in
            body(value)
            return false
        }
    }

    /// Calls `body` with the bytes of the first cookie `name`, as `withCookie(named:_:)` does, and
    /// returns how many cookies of that name the request carries: more than one is ambiguous (a
    /// sibling subdomain or another port can set a cookie of the same name).
    public func withFirstCookie(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Int {
        var count = 0
        forEachCookie(named: name) { value in
            count += 1
            if count == 1 { body(value) }
            return true
        }
        return count
    }

    /// Calls `body` with the bytes of each cookie `name`, in order, until it returns false.
    private func forEachCookie(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var wanted = name
        wanted.withUTF8 { wanted in
            forEachCookie { cookieName, value in
                // Names are never empty here (forEachCookie skips those), so both have an address.
                guard cookieName.count == wanted.count, let name = cookieName.baseAddress,
                    let want = wanted.baseAddress,
                    memcmp(name, want, wanted.count) == 0
                else { return true }
                return body(value)
            }
        }
    }

    /// The cookies from every `Cookie` header (RFC 6265 §5.4); the first of a repeated name wins.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        forEachCookie { name, value in
            let key = String(decoding: name, as: UTF8.self)
            if result[key] == nil { result[key] = String(decoding: value, as: UTF8.self) }
            return true
        }
        return result
    }

    /// Calls `body` with each cookie's name and value, in order, until it returns false: the one
    /// parser behind `cookie(named:)` and `cookies`. Names and values are trimmed of spaces and
    /// tabs, a quoted value loses its quotes, and pairs without `=` or with an empty name are skipped.
    private func forEachCookie(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        headers.forEachValue(named: "Cookie") { bytes in
            guard let base = bytes.baseAddress else { return true }
            // memchr finds the separators (it reads many bytes at a time).
            func find(_ byte: UInt8, _ start: Int, _ end: Int) -> Int? {
                memchr(base + start, Int32(byte), end - start).map {
                    UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
                }
            }
            var start = 0
            while start < bytes.count {
                let end = find(UInt8(ascii: ";"), start, bytes.count) ?? bytes.count
                if let equals = find(UInt8(ascii: "="), start, end) {
                    let name = Request.trimmed(bytes, start, equals)
                    var value = Request.trimmed(bytes, equals + 1, end)
                    if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                        value = UnsafeBufferPointer(rebasing: value[1..<(value.count - 1)])
                    }
                    if !name.isEmpty, !body(name, value) { return false }
                }
                start = end + 1
            }
            return true
        }
    }

    /// `bytes[start..<end]` without leading and trailing spaces and tabs.
    private static func trimmed(
        _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> UnsafeBufferPointer<
        UInt8
    > {
        var start = start
        var end = end
        while start < end && (bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t")) { start += 1 }
        while end > start && (bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t")) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }
}
