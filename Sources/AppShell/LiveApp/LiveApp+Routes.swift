import AppShellHTTP

// The declared routes (`Route`) of a live app's visible screen: `show`, and their buttons.

extension LiveApp {
    /// The routes offered on the visible screen, with the coordinator that declares each: those
    /// its owner's type declares, then its owner's ancestors' — or, for a screen with no owner
    /// (a plain `ViewController`), those of the deepest coordinator declaring routes from it.
    func visibleRoutes() -> [(RouteEntry, Coordinator)] {
        guard !routes.isEmpty else { return [] }
        let visible = root.visibleScreen
        let source = ObjectIdentifier(type(of: visible))
        guard routes.contains(where: { $0.source == source }) else { return [] }
        var chain: [Coordinator] = []
        if let owner = (visible as? any OwnedScreen)?.owner {
            var next: Coordinator? = owner
            while let coordinator = next {
                chain.append(coordinator)
                next = coordinator.parent
            }
        } else {
            var flows: [(Coordinator, Int)] = []
            func walk(_ coordinator: Coordinator, _ depth: Int) {
                flows.append((coordinator, depth))
                for child in coordinator.children { walk(child, depth + 1) }
            }
            walk(coordinator, 0)
            chain = flows.sorted { $0.1 > $1.1 }.map(\.0)
        }
        var found: [(RouteEntry, Coordinator)] = []
        for coordinator in chain {
            let declaring = ObjectIdentifier(type(of: coordinator))
            for route in routes where route.source == source && route.coordinator == declaring {
                if !found.contains(where: { $0.0.name == route.name }) { found.append((route, coordinator)) }
            }
        }
        return found
    }

    /// `show`: follows the visible screen's route to `screen` — a new screen, owned by the
    /// coordinator that declares the route, pushed or presented.
    package func show(_ action: ActionRequest) throws(ActionError) {
        guard let name = action.string("screen"), routes.contains(where: { $0.name == name }) else {
            let names = Set(routes.map { "\"\($0.name)\"" }).sorted().joined(separator: " or ")
            throw ActionError(status: 400, "show needs \"screen\": \(names.isEmpty ? "a route's screen" : names)")
        }
        let visible = root.visibleScreen
        guard let (route, coordinator) = visibleRoutes().first(where: { $0.0.name == name }) else {
            throw ActionError(status: 409, "the \(visible.name) screen has no route to \"\(name)\"")
        }
        let screen = route.make()
        (screen as? any OwnedScreen)?.owner = coordinator
        switch route.kind {
        case .push:
            guard root.presented == nil, let navigation = root.navigation else {
                throw ActionError(status: 409, "the \(visible.name) screen is not in a navigation stack")
            }
            navigation.push(screen, animated: true)
        case .present:
            guard root.presented == nil else {
                throw ActionError(status: 409, "the \(visible.name) screen is presented already")
            }
            root.present(screen, animated: true)
        }
    }

    /// The visible screen's routes as buttons — forms that send `show`, with and without
    /// JavaScript — placed after the screen's own HTML; empty when it has none.
    func routesHTML() -> String {
        let offered = visibleRoutes()
        guard !offered.isEmpty, let context = root.visibleScreen.context else { return "" }
        let forms = offered.map { route, _ in
            let field = "<input type=\"hidden\" name=\"screen\" value=\"\(HTML.escape(route.name))\">\n"
            return context.form(ActionDescription.show.name, label: route.title, fields: field)
        }
        return "\n<nav class=\"routes\" aria-label=\"Go to\">\n" + forms.joined(separator: "\n") + "\n</nav>"
    }

    /// The visible screen's HTML with its routes' buttons: what the page shows in `#screen`.
    package func visibleHTML() -> String { root.visibleScreen.renderHTML() + routesHTML() }
}
