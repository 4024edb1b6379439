import AppShellJSON
import FoundationEssentials

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

/// Standard base64 (RFC 4648 §4, padded), for bytes inside JSON: FoundationEssentials' coder.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The bytes of padded base64 text; `nil` for any other text (another character, no padding).
    static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map(Array.init)
    }
}
