import AppShellConcurrency
import Synchronization

/// The id that ties together everything logged about one request and its `X-Request-ID` answer.
///
/// An incoming `X-Request-ID` is kept when it is a short token: 1 to 64 characters of
/// `A-Z a-z 0-9 . _ -` (what a proxy or client generates, and nothing a log line or header could be
/// split with). Any other value, or none, is replaced by a generated id: 15 characters of
/// `A-Z a-z 0-9`: six random per process, then nine hex digits of a per-process counter, so ids are
/// unique within a run and most likely between runs. A generated id is held as its number until its
/// text is asked for: sending it back allocates nothing.
package enum RequestID {
    /// The longest incoming id that is kept.
    package static let maxLength = 64

    /// The name of the header field that carries the id, both ways.
    package static let headerName = "X-Request-ID"

    /// `headerName` as a C string for libmicrohttpd (a `String` passed there would be copied
    /// into a new array at every call).
    static var cHeaderName: UnsafePointer<CChar> {
        UnsafeRawPointer(cHeaderNameLiteral.utf8Start).assumingMemoryBound(to: CChar.self)
    }
    private static let cHeaderNameLiteral: StaticString = "X-Request-ID"

    /// Whether `bytes` is an id to keep as it is.
    package static func isAcceptable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
    package static func isAcceptable(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isAcceptable($0) }
    }

    /// `incoming` when it is acceptable, else a new id.
    package static func resolve(_ incoming: String?) -> String { Value(incoming).text }

    /// A new id, unique in this process (until 2^36 ids were made).
    package static func generate() -> String { Value.next().text }

    /// A request's id as the server holds it: the number of a generated one (its text is made
    /// only when asked for: most requests only send it, and that needs no `String`), or the text
    /// the client sent. Keep one (`Request.heldRequestID`) for what may be logged after the
    /// request is gone: its text is made only if that happens.
    package enum Value: Sendable {
        /// Generated: the counter's value.
        case generated(UInt64)
        /// Sent by the client and acceptable.
        case given(String)

        /// The next generated id.
        static func next() -> Value {
            .generated(UInt64(truncatingIfNeeded: counter.wrappingAdd(1, ordering: .relaxed).oldValue))
        }

        /// `incoming` when it is acceptable, else the next generated id.
        init(_ incoming: String?) {
            self = if let incoming, RequestID.isAcceptable(incoming) { .given(incoming) } else { .next() }
        }

        /// The id as text.
        package var text: String {
            switch self {
            case .given(let text): return text
            case .generated:
                return withCString { id, _ in String(cString: id) }
            }
        }

        /// Calls `body` with the id as a NUL-terminated string and its length (a generated one is
        /// written on the stack: six prefix characters, then nine hex digits of its number).
        func withCString<Result>(_ body: (UnsafePointer<CChar>, Int) -> Result) -> Result {
            switch self {
            case .given(let text):
                return text.withCString { body($0, text.utf8.count) }
            case .generated(var number):
                // By hand, not `sodium_bin2hex`: this runs on every request, writes a counter's
                // nibbles (not bytes) on the stack, and libsodium is linked by AppShellAuth only.
                var words: (UInt64, UInt64) = (processPrefix, 0)
                return withUnsafeMutableBytes(of: &words) { raw in
                    for index in stride(from: 14, through: 6, by: -1) {
                        let digit = UInt8(truncatingIfNeeded: number & 0xF)
                        raw[index] = digit < 10 ? 48 + digit : 87 + digit
                        number >>= 4
                    }
                    return body(raw.baseAddress!.assumingMemoryBound(to: CChar.self), 15)
                }
            }
        }
    }

    private static let counter = Atomic<Int>(0)
    /// Six random characters of `A-Z a-z 0-9`, as the low six bytes of a little-endian word.
    private static let processPrefix: UInt64 = {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var prefix: UInt64 = 0
        for index in 0..<6 { prefix |= UInt64(alphabet.randomElement()!) << UInt64(8 * index) }
        return prefix
    }()
}
