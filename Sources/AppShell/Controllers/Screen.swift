import AppShellConcurrency
import AppShellHTTP
import AppShellJSON

/// A screen type whose actions are known without making one.
package protocol ActionOffering {
    /// The actions every screen of this type offers.
    static var offeredActions: [ActionDescription] { get }
}

/// Actions that carry out their own effect on the coordinator that owns their screen: a small
/// screen's file can hold its whole behaviour, without a handler in the coordinator.
public protocol CoordinatedActions: ScreenActions {
    /// The coordinator that owns the screen (`Coordinator.own(_:)`, or `shows` after a restart).
    associatedtype Owner: Coordinator
    /// Does what the action asks, on `owner`, with the request's parameters.
    func perform(on owner: Owner, _ request: ActionRequest) throws(ActionError)
}

extension CoordinatedActions {
    /// Performs the action when `owner` is its `Owner`; says whether it was.
    fileprivate func perform(onAny owner: AnyObject?, _ request: ActionRequest) throws(ActionError) -> Bool {
        guard let owner = owner as? Owner else { return false }
        try perform(on: owner, request)
        return true
    }
}

/// A screen whose coordinator the framework sets (`Coordinator.own(_:)`, `Coordinator.restore(_:)`).
protocol OwnedScreen: AnyObject {
    /// The coordinator its actions go to (not retained).
    var owner: Coordinator? { get set }
}

/// The names of each `ScreenActions` enum's cases, by type (one entry per enum an app defines).
private let screenActionNames = Locked<[ObjectIdentifier: [String]]>([:])

/// A screen with typed actions, what an app's screens subclass: subclass it with the screen's
/// `ScreenActions` enum, render its forms with `form(_:label:)`, and let its coordinator handle
/// them: the coordinator that owns it (`Coordinator.own(_:)`) with its `handle(_:_:)` handler for
/// the enum, or the enum itself (`CoordinatedActions`), or a handler given to this screen
/// (`handle(by:_:)`). A screen that offers no action at all (a splash) subclasses
/// `ViewController`, this class's base, instead.
open class Screen<Action: ScreenActions>: ViewController, ActionOffering, OwnedScreen {
    private var handler: ((Action, ActionRequest) throws(ActionError) -> Void)?
    /// The coordinator that handles the screen's actions (not retained).
    public private(set) weak var coordinator: AnyObject?

    var owner: Coordinator? {
        get { coordinator as? Coordinator }
        set { coordinator = newValue }
    }

    /// Every case of `Action`, with its parameters and role.
    public static var offeredActions: [ActionDescription] { Action.descriptions }

    /// Every case of `Action`'s name, made once per enum type. In this generic class, code over
    /// `Action` is not specialized: mapping its cases looks up generic metadata at run time on
    /// every call (with the key path `\.rawValue` it also instantiated the key path), and every
    /// action reads the names twice, for its dispatch and its answer (2 200 instructions a read
    /// with a closure, 20 000 an action with the key path; callgrind, the Performance article).
    /// The screen keeps the names once read: every action reads them twice (its dispatch, its
    /// state), and the shared table's lock and look-up were 740 instructions a read (8 bytes a
    /// screen; callgrind, bench/RESULTS.md).
    open override var actions: [String] {
        if let keptActionNames { return keptActionNames }
        let type = ObjectIdentifier(Action.self)
        let names =
            screenActionNames.withLock({ $0[type] })
            ?? {
                let names = Action.descriptions.map { $0.name }
                screenActionNames.withLock { $0[type] = names }
                return names
            }()
        keptActionNames = names
        return names
    }

    /// `actions`, once read.
    private var keptActionNames: [String]?

    /// Makes `coordinator` (not retained) handle this screen's actions with `body`; a screen
    /// whose coordinator is gone refuses them (409).
    public func handle<C: AnyObject>(
        by coordinator: C, _ body: @escaping (C, Action, ActionRequest) throws(ActionError) -> Void
    ) {
        self.coordinator = coordinator
        if let owner = coordinator as? Coordinator { DeclarationCheck.noteOwner(type(of: owner), owns: Self.self) }
        handler = { [weak coordinator] action, request throws(ActionError) in
            guard let coordinator else {
                throw ActionError(status: 409, "nothing handles \(request.name) now")
            }
            try body(coordinator, action, request)
        }
    }

    /// Gives `action` to the coordinator, typed: a name this screen does not offer is refused
    /// (409), a missing or mistyped parameter too (400, naming it and the type it needs).
    open override func perform(_ action: ActionRequest) throws(ActionError) {
        // No look-up of `actions` first: the shell's dispatch did it, and the enum knows its cases.
        let typed: Action
        do {
            typed = try Action(decoding: action)
        } catch  where error.status == 409 {
            throw ActionError(status: 409, "the \(name) screen does not offer \"\(action.name)\"")
        }
        if let handler { return try handler(typed, action) }
        if let handler = owner?.handler(for: Action.self) { return try handler(typed, action) }
        if let coordinated = typed as? any CoordinatedActions, try coordinated.perform(onAny: coordinator, action) {
            return
        }
        throw ActionError(status: 409, "nothing handles \"\(action.name)\" on the \(name) screen")
    }

    /// Reports `action` as if the user had sent it (e.g. main asking for the list on a launch).
    public func report(_ action: Action) throws(ActionError) {
        try perform(action.actionRequest)
    }

    /// The form that sends `action` (its parameters as hidden fields), with its role for the
    /// page's script.
    public func form(_ action: Action, label: String, fields: String = "", buttonClass: String = "") -> String {
        let sent = action.actionRequest
        let hidden = sent.parameters.sorted { $0.key < $1.key }.map { name, value in
            "<input type=\"hidden\" name=\"\(HTML.escape(name))\" value=\"\(HTML.escape(value.formText))\">\n"
        }
        return context?.form(
            sent.name, label: label, fields: hidden.joined() + fields, buttonClass: buttonClass, role: action.role)
            ?? ""
    }
}
