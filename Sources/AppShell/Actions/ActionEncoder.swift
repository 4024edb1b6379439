import AppShellJSON

/// Writes a typed action as the JSON API sends it: `Codable`'s encoding of an enum case
/// (`{"open": {"id": 1}}`) read as the action `open` with the parameter `id` = 1.
enum ActionEncoder {
    /// `action`'s name and parameters.
    static func encode<Action: ParameterizedCases>(_ action: Action) -> ActionRequest {
        let found = Found()
        // The encoders below throw nothing but what an action's own `encode(to:)` could.
        try? action.encode(to: CaseEncoder(found: found))
        return ActionRequest(name: found.name, parameters: found.parameters)
    }

    /// What the encoding found.
    final class Found {
        var name = ""
        var parameters: [String: JSON] = [:]
    }

    /// The encoder `Codable` gives the case: a keyed container of one key (the case's name), or
    /// a single string (a `String`-backed enum).
    struct CaseEncoder: Encoder {
        let found: Found
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(CaseContainer<Key>(found: found))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported() }

        func singleValueContainer() -> any SingleValueEncodingContainer { NameContainer(found: found) }
    }

    /// The case's one key: its name, holding the parameters.
    struct CaseContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let found: Found
        var codingPath: [any CodingKey] { [] }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            found.name = key.stringValue
            return KeyedEncodingContainer(ParameterContainer<NestedKey>(found: found))
        }

        mutating func encodeNil(forKey key: Key) throws { found.name = key.stringValue }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { found.name = key.stringValue }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported() }
        mutating func superEncoder() -> any Encoder { CaseEncoder(found: found) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { CaseEncoder(found: found) }
    }

    /// A `String`-backed enum's raw value: the name.
    struct NameContainer: SingleValueEncodingContainer {
        let found: Found
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws {}
        mutating func encode(_ value: String) throws { found.name = value }
        mutating func encode<T: Encodable>(_ value: T) throws {}
    }

    /// The associated values, by label.
    struct ParameterContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let found: Found
        var codingPath: [any CodingKey] { [] }

        private func set(_ value: JSON, _ key: Key) { found.parameters[key.stringValue] = value }

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            // Another whole number, or a `String`-backed enum: its one value.
            let single = SingleValue()
            try value.encode(to: single)
            if let json = single.value { set(json, key) }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(ParameterContainer<NestedKey>(found: Found()))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported() }
        mutating func superEncoder() -> any Encoder { SingleValue() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { SingleValue() }
    }

    /// A parameter's value of another type, as one JSON value.
    final class SingleValue: Encoder, SingleValueEncodingContainer {
        var value: JSON?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(ParameterContainer<Key>(found: Found()))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported() }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { value = nil }
        func encode(_ value: String) throws { self.value = .string(value) }
        func encode(_ value: Bool) throws { self.value = .bool(value) }
        func encode(_ value: Double) throws { self.value = .double(value) }
        func encode(_ value: Float) throws { self.value = .double(Double(value)) }
        func encode(_ value: Int) throws { self.value = .integer(value) }
        func encode(_ value: Int8) throws { self.value = .integer(Int(value)) }
        func encode(_ value: Int16) throws { self.value = .integer(Int(value)) }
        func encode(_ value: Int32) throws { self.value = .integer(Int(value)) }
        func encode(_ value: Int64) throws { self.value = .integer(Int(value)) }
        func encode(_ value: UInt) throws { self.value = Int(exactly: value).map { .integer($0) } }
        func encode(_ value: UInt8) throws { self.value = .integer(Int(value)) }
        func encode(_ value: UInt16) throws { self.value = .integer(Int(value)) }
        func encode(_ value: UInt32) throws { self.value = .integer(Int(value)) }
        func encode(_ value: UInt64) throws { self.value = Int(exactly: value).map { .integer($0) } }
        func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }
    }

    /// What an action's parameters cannot be: lists (an action's parameters are single values).
    struct Unsupported: UnkeyedEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(ParameterContainer<NestedKey>(found: Found()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { SingleValue() }
    }
}

extension JSON {
    /// The value as a form sends it: text as it is, a number or `true`/`false` written out (what
    /// `ActionDecoder` reads back as the parameter's type).
    var formText: String {
        switch self {
        case .string(let text): return text
        case .null: return ""
        default: return String(decoding: serialized, as: UTF8.self)
        }
    }
}
