import AppShellConcurrency
import Synchronization

/// The id that ties together everything logged about one request and its `X-Request-ID` answer.
///
/// An incoming `X-Request-ID` is kept when it is a short token: 1 to 64 characters of
/// `A-Z a-z 0-9 . _ -` (what a proxy or client generates, and nothing a log line or header could be
/// split with). Any other value, or none, is replaced by a generated id: 15 characters of
/// `A-Z a-z 0-9`, six random per process followed by nine from a per-process counter, so ids are
/// unique within a run and, with overwhelming odds, between runs. A generated id fits in a Swift
/// small string: making one allocates nothing.
public enum RequestID {
    /// The longest incoming id that is kept.
    public static let maxLength = 64

    /// The name of the header field that carries the id, both ways.
    public static let headerName = "X-Request-ID"

    /// Whether `bytes` is an id to keep as it is.
    public static func isAcceptable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// Whether `text` is an id to keep as it is.
    public static func isAcceptable(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isAcceptable($0) }
    }

    /// `incoming` when it is acceptable, else a new id.
    public static func resolve(_ incoming: String?) -> String {
        if let incoming, isAcceptable(incoming) { return incoming }
        return generate()
    }

    /// A new id, unique in this process.
    public static func generate() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buffer in
            var prefix = processPrefix
            for index in 0..<6 {
                buffer[index] = alphabet[Int(prefix % 62)]
                prefix /= 62
            }
            var rest = UInt64(truncatingIfNeeded: number)
            for index in stride(from: 14, through: 6, by: -1) {
                buffer[index] = alphabet[Int(rest % 62)]
                rest /= 62
            }
            return String(decoding: UnsafeBufferPointer(buffer), as: UTF8.self)
        }
    }

    private static let counter = Atomic<Int>(0)
    private static let processPrefix: UInt64 = UInt64.random(in: 0..<56_800_235_584)  // 62^6
    private static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
}
