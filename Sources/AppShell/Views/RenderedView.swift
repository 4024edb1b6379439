import AppShellConcurrency
import AppShellSessions

/// A screen's `body` rendered for the request being handled: the nodes and the JSON are made once
/// for the state, the page and the title, for as long as the version and the stored values stay
/// the same. The root keeps one, for the request only (`Shell.withBound` lets it go), so no
/// session holds a rendered view between requests.
final class RenderedView {
    let screen: ObjectIdentifier
    let version: Int
    let values: [String: DefaultsValue]
    let view: ScreenView
    private var bytes: [UInt8]?

    init(screen: ObjectIdentifier, version: Int, values: [String: DefaultsValue], view: ScreenView) {
        self.screen = screen
        self.version = version
        self.values = values
        self.view = view
    }

    /// The screen's `view` (`ScreenView.writeJSON(of:into:)`), made once.
    func jsonBytes(of screen: ViewController) -> [UInt8] {
        if let bytes { return bytes }
        var made: [UInt8] = []
        made.reserveCapacity(512)
        view.writeJSON(of: screen, into: &made)
        bytes = made
        return made
    }

    /// Appends the screen's `view` to `output`: written there at once (the state answer, which an
    /// action asks for once), or copied when it was made already.
    func writeJSON(of screen: ViewController, into output: inout [UInt8]) {
        if let bytes {
            output.append(contentsOf: bytes)
        } else {
            view.writeJSON(of: screen, into: &output)
        }
    }
}

/// How to read the `body` of each screen type that is a `View` (`nil` for one that is not), found
/// once per type: asking a screen whether it is a `View` (a conformance lookup and an existential)
/// cost more than a small screen's whole tree.
private let bodyReaders = Locked<[ObjectIdentifier: BodyReader?]>([:])

/// Reads the `body` of the screens of one type.
final class BodyReader: @unchecked Sendable {
    // @unchecked: `read` captures nothing but a type, which never changes.
    let read: (ViewController) -> ScreenView

    init(_ read: @escaping (ViewController) -> ScreenView) { self.read = read }

    /// What a screen that is not a `View` keeps as its reader (`knownBodyReader`): none.
    static let notAView = BodyReader { _ in fatalError("not a View") }

    /// Reads the `body` of screens of type `V`, a `ViewController` subclass.
    static func of<V: View>(_ type: V.Type) -> BodyReader {
        BodyReader { screen in ScreenView(unsafeBitCast(screen, to: V.self)) }
    }
}

extension ViewController {
    /// What reads this screen's `body`, when it is a `View`.
    var bodyReader: BodyReader? {
        if let known = knownBodyReader { return known === BodyReader.notAView ? nil : known }
        let reader = typeBodyReader
        knownBodyReader = reader ?? BodyReader.notAView
        return reader
    }

    /// What reads the `body` of screens of this one's type, from the shared table.
    private var typeBodyReader: BodyReader? {
        let type = ObjectIdentifier(Swift.type(of: self))
        if let known = bodyReaders.withLock({ $0[type] }) { return known }
        let reader = (Swift.type(of: self) as? any View.Type).map { BodyReader.of($0) }
        bodyReaders.withLock { $0[type] = .some(reader) }
        return reader
    }

    /// The screen's `body` rendered as the session is now, when the screen is a `View`.
    var renderedView: RenderedView? {
        let root = context?.root
        let version = root?.version ?? -1
        let values = root?.session?.storedValues ?? root?.defaults.storedValues ?? [:]
        let identity = ObjectIdentifier(self)
        if let kept = root?.renderedView, kept.screen == identity, kept.version == version, kept.values == values {
            return kept
        }
        guard let reader = bodyReader else { return nil }
        let rendered = RenderedView(screen: identity, version: version, values: values, view: reader.read(self))
        root?.renderedView = rendered
        return rendered
    }
}
