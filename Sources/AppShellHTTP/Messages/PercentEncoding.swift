/// Percent-decoding of request targets and form bodies (RFC 3986 §2.1, WHATWG urlencoded).
package enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusIsSpace`); `nil` when an escape is
    /// malformed, the result is not UTF-8, or it contains a NUL byte.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String? {
        // Most parts have nothing to decode: validate them as they are, without a copy.
        var plain = true
        var ascii = true
        for byte in bytes {
            if byte == UInt8(ascii: "%") || byte == 0 || (plusIsSpace && byte == UInt8(ascii: "+")) {
                plain = false
                break
            }
            if byte >= 0x80 { ascii = false }
        }
        // ASCII is valid UTF-8 as it is (and String's generic validation costs more than the rest).
        if plain { return ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 3
                continue
            }
            output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        if output.contains(0) { return nil }
        return String(validating: output, as: UTF8.self)
    }

    /// Parses `a=1&b=two` pairs, decoding each name and value; `nil` when any part is malformed.
    /// Empty parts (`a=1&&b=2`) are skipped.
    static func decodePairs(_ bytes: UnsafeBufferPointer<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        var start = 0
        while start < bytes.count {
            var end = start
            var equals = -1
            while end < bytes.count && bytes[end] != UInt8(ascii: "&") {
                if equals < 0 && bytes[end] == UInt8(ascii: "=") { equals = end }
                end += 1
            }
            if end > start {
                let nameEnd = equals < 0 ? end : equals
                let valueStart = equals < 0 ? end : equals + 1
                guard let name = decode(UnsafeBufferPointer(rebasing: bytes[start..<nameEnd]), plusIsSpace: true),
                    let value = decode(UnsafeBufferPointer(rebasing: bytes[valueStart..<end]), plusIsSpace: true)
                else { return nil }
                pairs.append((name, value))
            }
            start = end + 1
        }
        return pairs
    }

    /// `text` percent-decoded (`+` as a space when `plusIsSpace`); `nil` when an escape is
    /// malformed, the result is not UTF-8, or it contains a NUL byte.
    package static func decode(_ text: String, plusIsSpace: Bool = false) -> String? {
        var text = text
        return text.withUTF8 { decode($0, plusIsSpace: plusIsSpace) }
    }

    /// The `a=1&b=two` pairs of a query, decoded; `nil` when any part is malformed.
    package static func decodeQuery(_ query: String) -> [(name: String, value: String)]? {
        var query = query
        return query.withUTF8 { decodePairs($0) }
    }

    /// Encodes `text` for use in a URL path segment or query value.
    package static func encode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                // RFC 3986's upper-case `%XX`; libsodium (lower case) is linked by AppShellAuth only.
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                output.unicodeScalars.append("%")
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
