import AppShellConcurrency
import AppShellHTTP
import AppShellJSON

/// An app's pages, as XCoordinator's routes: an enum whose cases are the pages, their labelled
/// associated values the pages' typed parameters, each case declaring once its URL pattern and
/// the screen it shows:
///
/// ```swift
/// enum NotesRoute: AppRoutes {
///     case notes
///     case note(id: Int)
///
///     static let allCases: [NotesRoute] = [.notes, .note(id: 1)]
///
///     var path: String {
///         switch self {
///         case .notes: "/notes"
///         case .note: "/notes/:id"
///         }
///     }
///
///     var screen: ViewController.Type {
///         switch self {
///         case .notes: NoteListScreen.self
///         case .note: NoteDetailScreen.self
///         }
///     }
/// }
/// ```
///
/// A `:name` segment of the pattern is the parameter of that label; a parameter the pattern does
/// not name is a query member (`/login?next=…`). The framework derives from the cases the app's
/// page paths, the URL of what a session shows (`url`: the visible screen's case, its parameters
/// read from the screen's `@SceneStorage` of the same names), and reads a URL back as a case —
/// typed, so `/notes/abc` names no page (404). See `RoutedApplication`.
public protocol AppRoutes: ParameterizedCases {
    /// The case's URL pattern: `/notes/:id`.
    var path: String { get }
    /// The screen the case shows: the page of a session whose visible screen is one of these.
    var screen: ViewController.Type { get }
}

extension AppRoutes {
    /// The URL of this page: the pattern with the parameters in it, the others as the query
    /// (`/notes/3`, `/login?next=%2Fnotes%2F3`); a parameter without a value is left out.
    public var url: String {
        let pattern = path
        // A page without parameters is its pattern: no encoding of the case.
        let table = RouteTable.of(Self.self)
        if let index = table.byPattern[pattern], table.pages[index].parameters.isEmpty { return pattern }
        let sent = ActionEncoder.encode(self)
        var parameters = sent.parameters
        var segments: [String] = []
        for segment in pattern.split(separator: "/") {
            if segment.hasPrefix(":"), let value = parameters.removeValue(forKey: String(segment.dropFirst())) {
                segments.append(PercentEncoding.encode(value.formText))
            } else {
                segments.append(String(segment))
            }
        }
        let query = parameters.filter { $0.value != .null }.sorted { $0.key < $1.key }
            .map { $0.key + "=" + PercentEncoding.encode($0.value.formText) }
        return "/" + segments.joined(separator: "/") + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// The case `url` names: a page whose pattern is the path itself (no parameter in it) first,
    /// else each case's pattern in the order of `allCases` (the first whose parameters also
    /// decode: `/notes/abc` is not `note(id:)`), the query's members given to the parameters the
    /// pattern does not name. `nil` when none does.
    public init?(url: String) {
        let (path, query) = Self.split(url)
        guard let route = Self(path: path, query: query) else { return nil }
        self = route
    }

    /// The case whose pattern matches `path`, with `query`'s members for its other parameters.
    init?(path: String, query: [String: String]) {
        let table = RouteTable.of(Self.self)
        if let index = table.byPattern[path], table.pages[index].parameters.isEmpty,
            let page = table.samples[index] as? Self
        {
            self = page
            return
        }
        let given = path.split(separator: "/", omittingEmptySubsequences: true)
        for page in table.pages where page.segments.count == given.count && !page.parameters.isEmpty {
            var parameters: [String: JSON] = [:]
            var matches = true
            for (expected, segment) in zip(page.segments, given) {
                if expected.hasPrefix(":") {
                    guard let value = PercentEncoding.decode(String(segment)) else {
                        matches = false
                        break
                    }
                    parameters[String(expected.dropFirst())] = .string(value)
                } else if expected != segment {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            for parameter in page.parameters where parameters[parameter.name] == nil {
                if let value = query[parameter.name] { parameters[parameter.name] = .string(value) }
            }
            if let route = try? ActionDecoder.decode(ActionRequest(name: page.name, parameters: parameters)) as Self {
                self = route
                return
            }
        }
        return nil
    }

    /// The page paths: every case's pattern (`/notes/:id`), as the router takes them.
    public static var pagePaths: [String] { RouteTable.of(Self.self).pages.map(\.pattern) }

    /// `url`'s path and its query's members (percent-decoded; the first of a name).
    static func split(_ url: String) -> (path: String, query: [String: String]) {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        for (name, value) in PercentEncoding.decodeQuery(parts.dropFirst().first.map(String.init) ?? "") ?? []
        where query[name] == nil {
            query[name] = value
        }
        return (String(parts[0]), query)
    }

    /// The case whose screen `screen` is, its parameters read from the screen's `@SceneStorage`
    /// values of the same names (`nil` when no case shows it, or a parameter has no value).
    public static func showing(_ screen: ViewController) -> Self? {
        let table = RouteTable.of(Self.self)
        for index in table.byScreen[ObjectIdentifier(type(of: screen))] ?? [] {
            let page = table.pages[index]
            if page.parameters.isEmpty { return table.samples[index] as? Self }
            let values = screen.sceneValues
            if let route = try? ActionDecoder.decode(
                ActionRequest(name: page.name, parameters: values.mapValues(\.json))) as Self
            {
                return route
            }
        }
        return nil
    }
}

/// What an `AppRoutes` type's cases declare, read once per type: a page URL opened, a session's
/// URL written, went through every case's encoding and decoding (50 000 instructions a page,
/// callgrind) — a page without parameters is now found by its pattern, and is its sample. Not
/// generic, so that reading it costs no generic metadata.
final class RouteTable: @unchecked Sendable {
    /// One case: its name, pattern, the pattern's segments, parameters and screen type.
    struct Page {
        let name: String
        let pattern: String
        let segments: [Substring]
        let parameters: [ActionParameter]
        let screen: ObjectIdentifier
    }

    /// The cases' samples (values of the `AppRoutes` type), in the order of `allCases`.
    let samples: [Any]
    /// The cases, in the same order.
    let pages: [Page]
    /// The index of the first case of each pattern.
    let byPattern: [String: Int]
    /// The indices of the cases of each screen type, in order.
    let byScreen: [ObjectIdentifier: [Int]]

    private init<Routes: AppRoutes>(_ type: Routes.Type) {
        let cases = Array(Routes.allCases)
        samples = cases
        pages = cases.map { sample in
            let name = ActionEncoder.encode(sample).name
            return Page(
                name: name, pattern: sample.path, segments: sample.path.split(separator: "/"),
                parameters: ActionProbe.parameters(of: Routes.self, name), screen: ObjectIdentifier(sample.screen))
        }
        var byPattern: [String: Int] = [:]
        var byScreen: [ObjectIdentifier: [Int]] = [:]
        for (index, page) in pages.enumerated() {
            if byPattern[page.pattern] == nil { byPattern[page.pattern] = index }
            byScreen[page.screen, default: []].append(index)
        }
        self.byPattern = byPattern
        self.byScreen = byScreen
    }

    /// The table of `type`, made at its first use (immutable: shared by every thread).
    static func of<Routes: AppRoutes>(_ type: Routes.Type) -> RouteTable {
        let key = ObjectIdentifier(type)
        if let known = routeTables.withLock({ $0[key] }) { return known }
        let made = RouteTable(type)
        return routeTables.withLock { tables in
            if let known = tables[key] { return known }
            tables[key] = made
            return made
        }
    }
}

/// Each `AppRoutes` type's table, made once.
private let routeTables = Locked<[ObjectIdentifier: RouteTable]>([:])
