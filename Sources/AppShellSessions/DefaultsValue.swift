import AppShellJSON

/// A value the defaults store holds: the property-list types of `UserDefaults`.
public enum DefaultsValue: Sendable, Hashable {
    /// A Boolean.
    case bool(Bool)
    /// An integer.
    case integer(Int)
    /// A floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// Raw bytes.
    case data([UInt8])
    /// An array of values.
    case array([DefaultsValue])
    /// A dictionary of values.
    case dictionary([String: DefaultsValue])
}

extension DefaultsValue {
    /// The JSON a backend stores: Booleans, numbers, strings and arrays as themselves; bytes as
    /// `{"data": "<base64>"}` and dictionaries as `{"dictionary": {…}}`, so every kind comes back
    /// as the kind it was. A `double` is written with a fraction or exponent and so stays a double.
    public var json: JSON {
        switch self {
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data(let bytes): return .object(["data": .string(Base64.encode(bytes))])
        case .array(let values): return .array(values.map(\.json))
        case .dictionary(let values): return .object(["dictionary": .object(values.mapValues(\.json))])
        }
    }

    /// The value a backend's JSON stands for; `nil` when it is not one `json` produces.
    public init?(json: JSON) {
        switch json {
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .array(let elements):
            var values: [DefaultsValue] = []
            for element in elements {
                guard let value = DefaultsValue(json: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case .object(let members):
            if members.count == 1, let text = members["data"]?.stringValue, let bytes = Base64.decode(text) {
                self = .data(bytes)
            } else if members.count == 1, let inner = members["dictionary"]?.objectValue {
                var values: [String: DefaultsValue] = [:]
                for (key, element) in inner {
                    guard let value = DefaultsValue(json: element) else { return nil }
                    values[key] = value
                }
                self = .dictionary(values)
            } else {
                return nil
            }
        case .null:
            return nil
        }
    }

    /// Encodes a whole set of values (a session's defaults) as one JSON object.
    public static func encode(_ values: [String: DefaultsValue]) -> [UInt8] {
        JSON.object(values.mapValues(\.json)).serialized
    }

    /// Decodes what `encode` wrote; `nil` when the bytes are not such an object.
    public static func decode(_ bytes: [UInt8]) -> [String: DefaultsValue]? {
        guard let members = (try? JSON(parsing: bytes))?.objectValue else { return nil }
        var values: [String: DefaultsValue] = [:]
        for (key, element) in members {
            guard let value = DefaultsValue(json: element) else { return nil }
            values[key] = value
        }
        return values
    }
}

/// Standard base64 (RFC 4648 §4, padded), for bytes inside JSON.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        for index in stride(from: 0, to: bytes.count, by: 3) {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            output.append(count > 1 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            output.append(count > 2 ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 4 * 3)
        for index in stride(from: 0, to: characters.count, by: 4) {
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = characters[index + offset]
                if character == UInt8(ascii: "=") && index + 4 == characters.count && offset >= 2 {
                    padding += 1
                    group <<= 6
                    continue
                }
                guard padding == 0, let value = alphabet.firstIndex(of: character) else { return nil }
                group = group << 6 | UInt32(value)
            }
            output.append(UInt8(group >> 16 & 0xFF))
            if padding < 2 { output.append(UInt8(group >> 8 & 0xFF)) }
            if padding < 1 { output.append(UInt8(group & 0xFF)) }
        }
        return output
    }
}
