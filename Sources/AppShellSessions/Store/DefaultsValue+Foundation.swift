import FoundationEssentials

extension DefaultsValue {
    /// The value as the Foundation object `UserDefaults` would return.
    public var foundationObject: Any {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value
        case .double(let value): return value
        case .string(let value): return value
        case .data(let bytes): return Data(bytes)
        case .array(let values): return values.map(\.foundationObject)
        case .dictionary(let values): return values.mapValues(\.foundationObject)
        }
    }

    /// The value for a property-list object; `nil` for any other type.
    public init?(foundationObject object: Any) {
        switch object {
        case let value as DefaultsValue: self = value
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(value)
        case let value as Double: self = .double(value)
        case let value as String: self = .string(value)
        case let value as Data: self = .data(Array(value))
        case let value as [UInt8]: self = .data(value)
        case let values as [Any]:
            var converted: [DefaultsValue] = []
            for element in values {
                guard let value = DefaultsValue(foundationObject: element) else { return nil }
                converted.append(value)
            }
            self = .array(converted)
        case let values as [String: Any]:
            var converted: [String: DefaultsValue] = [:]
            for (key, element) in values {
                guard let value = DefaultsValue(foundationObject: element) else { return nil }
                converted[key] = value
            }
            self = .dictionary(converted)
        default:
            return nil
        }
    }
}
