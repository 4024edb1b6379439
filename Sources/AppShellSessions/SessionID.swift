/// A session identifier: 32 bytes from the system's CSPRNG, written as 43 characters of
/// unpadded base64url in the cookie.
///
/// Two identifiers compare in constant time, so the time a comparison takes says nothing about
/// how many bytes matched.
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes as four words.
    let words: (UInt64, UInt64, UInt64, UInt64)

    /// The number of characters of the text form.
    public static let textLength = 43

    init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// A new identifier from the system CSPRNG (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
    public static func random() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        return SessionID(words: (generator.next(), generator.next(), generator.next(), generator.next()))
    }

    /// Parses the 43-character base64url text; `nil` for any other text (wrong length,
    /// characters outside the alphabet, or non-zero padding bits).
    public init?(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard utf8.count == SessionID.textLength else { return nil }
        var bytes = [UInt8](repeating: 0, count: 33)
        var accumulator: UInt32 = 0
        var bits = 0
        var output = 0
        for character in utf8 {
            guard let value = SessionID.decodeTable[Int(character)] else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes[output] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                output += 1
            }
        }
        // 43 characters carry 258 bits: the last 2 must be zero for the text to be canonical.
        guard output == 32, accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes[0..<32]) }
        self.words = words
    }

    /// The raw 32 bytes.
    public var bytes: [UInt8] { withUnsafeBytes(of: words) { Array($0) } }

    /// Makes an identifier from 32 raw bytes (as a store keeps them); `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        self.words = words
    }

    /// The 43-character base64url text, as sent in the cookie.
    public var text: String {
        let alphabet = SessionID.alphabet
        let bytes = self.bytes
        var characters: [UInt8] = []
        characters.reserveCapacity(SessionID.textLength)
        for index in stride(from: 0, to: 32, by: 3) {
            // The last group holds two bytes: three characters, no padding.
            let hasSecond = index + 1 < 32
            let hasThird = index + 2 < 32
            let group =
                UInt32(bytes[index]) << 16 | (hasSecond ? UInt32(bytes[index + 1]) << 8 : 0)
                | (hasThird ? UInt32(bytes[index + 2]) : 0)
            characters.append(alphabet[Int(group >> 18 & 63)])
            characters.append(alphabet[Int(group >> 12 & 63)])
            if hasSecond { characters.append(alphabet[Int(group >> 6 & 63)]) }
            if hasThird { characters.append(alphabet[Int(group & 63)]) }
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// The text form, abbreviated: never log a whole live identifier.
    public var description: String { String(text.prefix(8)) + "…" }

    /// Constant-time equality: every byte is compared whatever the earlier ones were.
    public static func == (lhs: SessionID, rhs: SessionID) -> Bool {
        let difference =
            (lhs.words.0 ^ rhs.words.0) | (lhs.words.1 ^ rhs.words.1) | (lhs.words.2 ^ rhs.words.2)
            | (lhs.words.3 ^ rhs.words.3)
        return difference == 0
    }

    /// Hashes the identifier (its words are uniformly random).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// The first word, used to pick a registry shard.
    var shardKey: UInt64 { words.0 }

    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodeTable: [UInt8?] = {
        var table = [UInt8?](repeating: nil, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
