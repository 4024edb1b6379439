/// A reply of Redis, copied out of hiredis's reply object (which is freed at once).
enum RedisReply: Equatable, Sendable {
    /// A bulk string: bytes.
    case bytes([UInt8])
    /// A status such as `OK` or `QUEUED`.
    case status(String)
    /// An integer.
    case integer(Int64)
    /// An array of replies (`EXEC`, `HMGET`, `SCAN`).
    case array([RedisReply])
    /// Nothing (a missing key or field, an aborted transaction).
    case null
    /// An error the server answered (`ERR …`, `WRONGTYPE …`, `NOAUTH …`).
    case error(String)

    /// The bulk string's bytes, or `nil`.
    var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The bulk string or status as text, or `nil`.
    var text: String? {
        switch self {
        case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    /// The integer, or a bulk string holding one, or `nil`.
    var integer: Int64? {
        switch self {
        case .integer(let number): number
        case .bytes(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// Whether the server refused to run a script it does not have (`NOSCRIPT`).
    var isMissingScript: Bool {
        if case .error(let message) = self { return message.hasPrefix("NOSCRIPT") }
        return false
    }
}
