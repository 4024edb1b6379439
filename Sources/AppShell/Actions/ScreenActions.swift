import AppShellConcurrency
import AppShellJSON

/// What an action means to the page's script besides its effect on the server. The framework
/// renders it on the action's form (`data-role`), so the script never knows an app's action names.
public enum ActionRole: String, Sendable {
    /// Goes back one screen: the browser's back button sends it on a pushed screen.
    case back
    /// Closes a presented screen: the browser's back button sends it while the screen is up.
    case close
    /// Gives the session a new id (a login, a logout): the page opens its event stream again.
    case rotatesSession = "rotates-session"
    /// Schedules a notification for the user (`ScreenContext.scheduleNotification`): the page asks
    /// for permission to show system notifications first, inside the user's click.
    case notifies
}

/// An enum whose cases carry typed parameters as their labelled associated values — a screen's
/// actions (`ScreenActions`), a launch's sources (`LaunchSources`), an app's pages (`AppRoutes`):
/// a case is named by its name, its parameters decoded by label from JSON or from text (a form's,
/// a URL's), and `allCases` lists one sample of each case, from which they are described.
public protocol ParameterizedCases: Codable, CaseIterable, Sendable {}

/// A screen's actions: an enum whose cases are the actions the JSON API and the forms send, by
/// their names, with their associated values as typed parameters:
///
/// ```swift
/// enum NoteListAction: ScreenActions {
///     case open(id: Int)
///     case new
///
///     static let allCases: [NoteListAction] = [.open(id: 0), .new]
/// }
/// ```
///
/// `{"action": "open", "id": 1}` (or a form's `id=1`) arrives as `.open(id: 1)`; a missing or
/// mistyped parameter answers 400 naming it and the type it needs. Label every associated value:
/// the label is the parameter's name. An enum without associated values may be `String`-backed
/// (`enum MainAction: String, ScreenActions`), its raw values the names; one with them lists a
/// sample of each case in `allCases` (its values are the API document's example): the app's catalogue of actions,
/// with each parameter's name, type and whether it is required, is derived from those samples.
///
/// The screen offers every case, its coordinator switches over them (the compiler checks that it
/// handles each one).
public protocol ScreenActions: ParameterizedCases {
    /// What the action means to the page's script, if anything.
    var role: ActionRole? { get }
    /// The action as the JSON API and the forms send it: its name and its parameters.
    var actionRequest: ActionRequest { get }
    /// The action `request` names, its parameters decoded: 400 (naming the parameter and the
    /// type it needs) when one is missing or mistyped, 409 when no case has that name.
    init(decoding request: ActionRequest) throws(ActionError)
    /// The cases' names, parameters and roles (derived from `allCases`, once per type).
    static var descriptions: [ActionDescription] { get }
}

extension ScreenActions {
    /// No role by default.
    public var role: ActionRole? { nil }

    /// The case's name and its associated values, encoded.
    public var actionRequest: ActionRequest { ActionEncoder.encode(self) }

    /// The case `request` names, decoded from its parameters.
    public init(decoding request: ActionRequest) throws(ActionError) { self = try ActionDecoder.decode(request) }

    /// Every case of `allCases` (once per name), with its parameters read by decoding it.
    public static var descriptions: [ActionDescription] {
        actionDescriptions(of: Self.self) {
            var seen: Set<String> = []
            return allCases.compactMap { sample in
                let sent = sample.actionRequest
                guard seen.insert(sent.name).inserted else { return nil }
                return ActionDescription(
                    name: sent.name, parameters: ActionProbe.parameters(of: Self.self, sent.name), role: sample.role,
                    example: sent.parameters)
            }
        }
    }
}

extension ScreenActions where Self: RawRepresentable, RawValue == String {
    /// The raw value, with no parameters.
    public var actionRequest: ActionRequest { ActionRequest(name: rawValue) }

    /// The case whose raw value `request` names.
    public init(decoding request: ActionRequest) throws(ActionError) {
        guard let action = Self(rawValue: request.name) else {
            throw ActionError(status: 409, "there is no action \"\(request.name)\" here")
        }
        self = action
    }

    /// Every case, with no parameters.
    public static var descriptions: [ActionDescription] {
        actionDescriptions(of: Self.self) {
            allCases.map { ActionDescription(name: $0.rawValue, role: $0.role) }
        }
    }
}

/// Each `ScreenActions` type's descriptions, made once.
private let describedActions = Locked<[ObjectIdentifier: [ActionDescription]]>([:])

private func actionDescriptions(of type: Any.Type, _ make: () -> [ActionDescription]) -> [ActionDescription] {
    let key = ObjectIdentifier(type)
    if let known = describedActions.withLock({ $0[key] }) { return known }
    let made = make()
    describedActions.withLock { $0[key] = made }
    return made
}

/// One action as the app's catalogue describes it: its name, its parameters and its role. Two
/// descriptions are equal when those are; the example does not count.
public struct ActionDescription: Sendable, Hashable {
    /// The name in the JSON API and the forms.
    public let name: String
    /// Its parameters, in the order of the case's associated values.
    public let parameters: [ActionParameter]
    /// What it means to the page's script.
    public let role: ActionRole?
    /// Parameters to show it with: its sample's in `allCases` (the app's OpenAPI document gives
    /// them as the action's example, and its stateful tests send them).
    public let example: [String: JSON]

    /// `launch` (with its `source`, e.g. `notification`): the app was opened from a notification or a
    /// link. Every screen accepts it, and the app coordinator handles it; the page's script reads
    /// its name from the page (`data-launch-action`).
    public static let launch = ActionDescription(
        name: launchName, parameters: [ActionParameter(name: "source", type: .string)])

    /// `launch`'s name.
    static let launchName = "launch"

    /// An action named `name`.
    public init(
        name: String, parameters: [ActionParameter] = [], role: ActionRole? = nil, example: [String: JSON] = [:]
    ) {
        self.name = name
        self.parameters = parameters
        self.role = role
        self.example = example
    }

    /// Whether the two have the same name, parameters and role.
    public static func == (a: ActionDescription, b: ActionDescription) -> Bool {
        a.name == b.name && a.parameters == b.parameters && a.role == b.role
    }

    /// The name, parameters and role.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(parameters)
        hasher.combine(role)
    }

    /// The names of the parameters it cannot do without.
    public var requiredParameters: [String] { parameters.filter(\.isRequired).map(\.name) }
}

/// A parameter of an action: an associated value of its case.
public struct ActionParameter: Sendable, Hashable {
    /// A parameter's JSON type (a form sends each as text, read as this type).
    public enum Kind: String, Sendable {
        /// Text.
        case string
        /// A whole number (`Int`).
        case integer
        /// A number (`Double`).
        case number
        /// `true` or `false` (a form's checkbox: `on`).
        case boolean

        /// The type in words, for an error message: "an integer".
        var described: String {
            switch self {
            case .string: return "a string"
            case .integer: return "an integer"
            case .number: return "a number"
            case .boolean: return "true or false"
            }
        }
    }

    /// Its name: the associated value's label.
    public let name: String
    /// Its JSON type.
    public let type: Kind
    /// Whether the action needs it (an optional associated value may be left out).
    public let isRequired: Bool
    /// The values it may take, when its type is a `String`-backed enum.
    public let choices: [String]?

    /// A parameter named `name` of type `type`.
    public init(name: String, type: Kind, isRequired: Bool = true, choices: [String]? = nil) {
        self.name = name
        self.type = type
        self.isRequired = isRequired
        self.choices = choices
    }
}
