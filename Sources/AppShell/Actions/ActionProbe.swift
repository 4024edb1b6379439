/// Reads an action's parameters from its type: each case decoded once with a decoder that notes
/// what the case asks for — each associated value's label, its type, and whether it may be left
/// out — and answers with a value of that type.
enum ActionProbe {
    /// The parameters of `Action`'s case named `name`.
    static func parameters<Action: ParameterizedCases>(of type: Action.Type, _ name: String) -> [ActionParameter] {
        let notes = Notes()
        _ = try? Action(from: CaseDecoder(name: name, notes: notes))
        return notes.parameters
    }

    /// A case that `make` (an enum case with associated values, as a function: `ComposeAction.save`)
    /// makes of stand-in values: what its name and role are read from.
    static func sample<Action: ParameterizedCases, each Parameter: Decodable>(
        of make: (repeat each Parameter) -> Action
    ) -> Action {
        do {
            return make(repeat try standIn((each Parameter).self))
        } catch {
            preconditionFailure("\(Action.self): an action's parameters are single values: \(error)")
        }
    }

    /// A value of `type` that stands in for a real one (`0`, `""`, a first case).
    private static func standIn<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder(notes: Notes()).decode(type)
    }

    /// The JSON type of a parameter of `type`.
    static func kind<T>(of type: T.Type) -> ActionParameter.Kind {
        switch type {
        case is String.Type, is Substring.Type: return .string
        case is Bool.Type: return .boolean
        case is Double.Type, is Float.Type: return .number
        case is any FixedWidthInteger.Type: return .integer
        default:
            // Another `Decodable` (a `String`-backed enum, say): the type it asks of its value.
            guard let decodable = type as? any Decodable.Type else { return .string }
            let notes = Notes()
            _ = try? decodable.init(from: ValueDecoder(notes: notes))
            return notes.lastKind ?? .string
        }
    }

    /// The values a parameter of `type` may take, when it is a `String`-backed enum.
    static func choices<T>(of type: T.Type) -> [String]? {
        guard let iterable = type as? any (CaseIterable & RawRepresentable).Type else { return nil }
        return names(of: iterable)
    }

    private static func names<C: CaseIterable & RawRepresentable>(of type: C.Type) -> [String]? {
        let names = C.allCases.compactMap { $0.rawValue as? String }
        return names.isEmpty ? nil : names
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { C.allCases.first }

    /// What the decoding asked for.
    final class Notes {
        var parameters: [ActionParameter] = []
        var optional: Set<String> = []
        var lastKind: ActionParameter.Kind?
    }

    struct CaseDecoder: Decoder {
        let name: String
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard let key = Key(stringValue: name) else { throw ActionDecoder.UnknownCase(name: name) }
            return KeyedDecodingContainer(CaseContainer(key: key, notes: notes))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ActionDecoder.UnknownCase(name: name) }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { ValueDecoder(notes: notes) }
    }

    struct CaseContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let key: Key
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [key] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            throw ActionDecoder.UnknownCase(name: key.stringValue)
        }
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(ParameterContainer<NestedKey>(notes: notes))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ActionDecoder.UnknownCase(name: key.stringValue)
        }
        func superDecoder() throws -> any Decoder { ValueDecoder(notes: notes) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(notes: notes) }
    }

    /// Notes each associated value: optional ones are asked whether they are there first.
    struct ParameterContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool {
            notes.optional.insert(key.stringValue)
            return true
        }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let name = key.stringValue
            notes.lastKind = nil
            let value = try ValueDecoder(notes: notes).decode(type)
            notes.parameters.append(
                ActionParameter(
                    name: name, type: notes.lastKind ?? ActionProbe.kind(of: type),
                    isRequired: !notes.optional.contains(name), choices: ActionProbe.choices(of: type)))
            return value
        }
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw ActionDecoder.UnknownCase(name: key.stringValue)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ActionDecoder.UnknownCase(name: key.stringValue)
        }
        func superDecoder() throws -> any Decoder { ValueDecoder(notes: notes) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(notes: notes) }
    }

    /// Answers every value asked with one of its type, noting the type.
    struct ValueDecoder: Decoder, SingleValueDecodingContainer {
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw ActionDecoder.UnknownCase(name: "")
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ActionDecoder.UnknownCase(name: "") }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        private func noted<T>(_ kind: ActionParameter.Kind, _ value: T) -> T {
            notes.lastKind = kind
            return value
        }

        func decodeNil() -> Bool { false }
        func decode(_ type: String.Type) throws -> String { noted(.string, "") }
        func decode(_ type: Bool.Type) throws -> Bool { noted(.boolean, false) }
        func decode(_ type: Double.Type) throws -> Double { noted(.number, 0) }
        func decode(_ type: Float.Type) throws -> Float { noted(.number, 0) }
        func decode(_ type: Int.Type) throws -> Int { noted(.integer, 0) }
        func decode(_ type: Int8.Type) throws -> Int8 { noted(.integer, 0) }
        func decode(_ type: Int16.Type) throws -> Int16 { noted(.integer, 0) }
        func decode(_ type: Int32.Type) throws -> Int32 { noted(.integer, 0) }
        func decode(_ type: Int64.Type) throws -> Int64 { noted(.integer, 0) }
        func decode(_ type: UInt.Type) throws -> UInt { noted(.integer, 0) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { noted(.integer, 0) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { noted(.integer, 0) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { noted(.integer, 0) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { noted(.integer, 0) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            // A `String`-backed enum cannot be made of "": its first case stands in.
            if let iterable = type as? any CaseIterable.Type, let first = ActionProbe.firstCase(of: iterable) as? T {
                notes.lastKind = ActionProbe.kind(of: type)
                return first
            }
            return try T(from: self)
        }
    }
}
