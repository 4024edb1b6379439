import AppShellJSON

/// Reads a typed action from a request: `Codable`'s decoding of an enum case fed the action's
/// name as the case's key and its parameters — JSON values, or a form's text — as the associated
/// values, converted to the types the case declares.
enum ActionDecoder {
    /// The case of `Action` that `request` names, with its parameters: 400 naming the parameter and
    /// the type it needs when one is missing or mistyped, 409 when no case has the name.
    static func decode<Action: ParameterizedCases>(_ request: ActionRequest) throws(ActionError) -> Action {
        do {
            return try Action(from: CaseDecoder(request: request))
        } catch let error as ParameterError {
            throw ActionError(status: 400, error.message)
        } catch let error as UnknownCase {
            throw ActionError(status: 409, "there is no action \"\(error.name)\" here")
        } catch {
            throw ActionError(status: 400, "\(request.name) cannot be read from these parameters")
        }
    }

    /// A parameter missing or of the wrong type, in words.
    struct ParameterError: Error {
        let message: String
    }

    /// No case has the request's name.
    struct UnknownCase: Error {
        let name: String
    }

    /// The decoder `Codable` gives the enum: one key, the action's name.
    struct CaseDecoder: Decoder {
        let request: ActionRequest
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard let key = Key(stringValue: request.name) else { throw UnknownCase(name: request.name) }
            return KeyedDecodingContainer(CaseContainer(request: request, key: key))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw ParameterError(message: "\(request.name) cannot be read from these parameters")
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            ParameterValue(action: request.name, name: "action", value: .string(request.name))
        }
    }

    /// The enum's container: the one case named.
    struct CaseContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let request: ActionRequest
        let key: Key
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [key] }

        func contains(_ key: Key) -> Bool { key.stringValue == self.key.stringValue }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            throw ParameterError(message: "\(request.name) cannot be read from these parameters")
        }
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(ParameterContainer<NestedKey>(request: request))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ParameterError(message: "\(request.name) cannot be read from these parameters")
        }
        func superDecoder() throws -> any Decoder { CaseDecoder(request: request) }
        func superDecoder(forKey key: Key) throws -> any Decoder { CaseDecoder(request: request) }
    }

    /// The case's associated values, read from the request's parameters by label.
    struct ParameterContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let request: ActionRequest
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { request.parameters.keys.compactMap(Key.init(stringValue:)) }

        /// A form's empty text is no value for an optional parameter, as JSON's `null` is.
        private func given(_ key: Key) -> JSON? {
            switch request.parameters[key.stringValue] {
            case nil, .null?, .string("")?: return nil
            case let value?: return value
            }
        }

        func contains(_ key: Key) -> Bool { given(key) != nil }
        func decodeNil(forKey key: Key) throws -> Bool { given(key) == nil }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let name = key.stringValue
            guard let value = request.parameters[name], value != .null else {
                let kind = ActionProbe.kind(of: type)
                throw ParameterError(message: "\(request.name) needs \"\(name)\" (\(kind.described))")
            }
            return try ParameterValue(action: request.name, name: name, value: value).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw ParameterError(message: "\"\(key.stringValue)\" of \(request.name) must be a single value")
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ParameterError(message: "\"\(key.stringValue)\" of \(request.name) must be a single value")
        }
        func superDecoder() throws -> any Decoder { CaseDecoder(request: request) }
        func superDecoder(forKey key: Key) throws -> any Decoder { CaseDecoder(request: request) }
    }

    /// One parameter's value, converted to the type asked: JSON's own, or a form's text read as it.
    struct ParameterValue: Decoder, SingleValueDecodingContainer {
        let action: String
        let name: String
        let value: JSON
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw ParameterError(message: "\"\(name)\" of \(action) must be a single value")
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw ParameterError(message: "\"\(name)\" of \(action) must be a single value")
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        private func mismatch(_ kind: ActionParameter.Kind, _ choices: [String]? = nil) -> ParameterError {
            var given: String
            if case .string(let text) = value {
                given = "\"" + String(text.prefix(40)) + (text.count > 40 ? "…\"" : "\"")
            } else {
                given = value.formText
            }
            if given.count > 44 { given = String(given.prefix(43)) + "…" }
            let expected = choices.map { "one of " + $0.map { "\"\($0)\"" }.joined(separator: ", ") } ?? kind.described
            return ParameterError(message: "\"\(name)\" of \(action) must be \(expected), not \(given)")
        }

        func decodeNil() -> Bool { value == .null }

        func decode(_ type: String.Type) throws -> String {
            guard case .string(let text) = value else { throw mismatch(.string) }
            return text
        }

        func decode(_ type: Bool.Type) throws -> Bool {
            switch value {
            case .bool(let flag): return flag
            case .string("true"), .string("on"), .string("1"): return true
            case .string("false"), .string("off"), .string("0"), .string(""): return false
            default: throw mismatch(.boolean)
            }
        }

        func decode(_ type: Int.Type) throws -> Int {
            switch value {
            case .integer(let number): return number
            case .double(let number): if let whole = Int(exactly: number) { return whole }
            case .string(let text): if let number = FormNumber.integer(text) { return number }
            default: break
            }
            throw mismatch(.integer)
        }

        func decode(_ type: Double.Type) throws -> Double {
            switch value {
            case .double(let number): return number
            case .integer(let number): return Double(number)
            case .string(let text): if let number = FormNumber.number(text) { return number }
            default: break
            }
            throw mismatch(.number)
        }

        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

        private func whole<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            guard let number = T(exactly: try decode(Int.self)) else { throw mismatch(.integer) }
            return number
        }

        func decode(_ type: Int8.Type) throws -> Int8 { try whole(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try whole(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try whole(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try whole(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try whole(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try whole(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try whole(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try whole(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try whole(type) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            do {
                return try T(from: self)
            } catch let error as ParameterError {
                throw error
            } catch {
                // A `String`-backed enum given text that is none of its cases.
                let kind = ActionProbe.kind(of: type)
                throw mismatch(kind, ActionProbe.choices(of: type))
            }
        }
    }
}

/// A number as a form sends it: decimal digits only, so that the app's OpenAPI document can say
/// exactly which texts are numbers (`APIDocument`), and no spelling Swift's parsers also take
/// (`+1`, `1e3`, `0x1`, `nan`) is one.
enum FormNumber {
    /// A whole number's text: an optional `-` and 1 to 18 digits (every such text fits in `Int`).
    static let integerPattern = "^-?[0-9]{1,18}$"
    /// A number's text: an optional `-`, 1 to 15 digits, and optionally `.` and 1 to 15 more.
    static let numberPattern = "^-?[0-9]{1,15}([.][0-9]{1,15})?$"

    /// The whole number `text` writes, if it matches `integerPattern`.
    static func integer(_ text: String) -> Int? {
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard (1...18).contains(digits.count), digits.allSatisfy(isDigit) else { return nil }
        return Int(text)
    }

    /// The number `text` writes, if it matches `numberPattern`.
    static func number(_ text: String) -> Double? {
        let unsigned = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        let parts = unsigned.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.allSatisfy({ (1...15).contains($0.count) && $0.allSatisfy(isDigit) }) else { return nil }
        return Double(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
