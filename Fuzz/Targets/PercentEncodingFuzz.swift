@testable import AppShellHTTP

/// Percent-decoding (paths without `+` as a space, query and form parts with it) and encoding.
public enum PercentEncodingFuzz {
    /// Decoding gives NUL-free UTF-8 or nothing; what decodes encodes to unreserved bytes and
    /// `%XX` only and decodes back to itself; any NUL-free text survives encode then decode.
    public static func run(_ data: [UInt8]) {
        for plusIsSpace in [false, true] {
            let decoded = data.withUnsafeBufferPointer { PercentEncoding.decode($0, plusIsSpace: plusIsSpace) }
            if let decoded {
                FuzzCheck.require(!decoded.utf8.contains(0), "decoded text holds NUL")
                roundTrip(decoded)
            } else {
                FuzzCheck.require(
                    data.contains(UInt8(ascii: "%")) || data.contains(0) || !isUTF8(data),
                    "plain UTF-8 without NUL was refused")
            }
        }
        let text = String(decoding: data, as: UTF8.self)
        if !text.utf8.contains(0) { roundTrip(text) }
    }

    private static func roundTrip(_ text: String) {
        let encoded = PercentEncoding.encode(text)
        FuzzCheck.require(
            encoded.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default: return "-._~%".utf8.contains(byte)
                }
            }, "the encoding \(encoded) has a byte that is not unreserved")
        for plusIsSpace in [false, true] {
            var bytes = Array(encoded.utf8)
            let back = bytes.withUnsafeMutableBufferPointer {
                PercentEncoding.decode(UnsafeBufferPointer($0), plusIsSpace: plusIsSpace)
            }
            FuzzCheck.require(back == text, "encode then decode changed \(text.debugDescription)")
        }
    }

    private static func isUTF8(_ data: [UInt8]) -> Bool {
        data.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
    }
}
