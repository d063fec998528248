/// The console's only stylesheet, served at `/console.css` (the CSP allows styles from the console itself only).
enum ConsoleStyle {
    static let css = """
        :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
        body { margin: 0 auto; max-width: 72rem; padding: 0 1rem 2rem; line-height: 1.4; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; }
        header nav ul { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; padding: 0; }
        a:focus, button:focus, input:focus, select:focus, textarea:focus { outline: 3px solid #1a73e8; outline-offset: 2px; }
        table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1.5rem; }
        th, td { border-bottom: 1px solid #8884; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
        caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
        .warn { color: #b3261e; font-weight: 600; } .ok { color: #1e7e34; }
        form.action { border: 1px solid #8886; padding: 1rem; max-width: 40rem; }
        label { display: block; margin: 0.5rem 0 0.25rem; font-weight: 600; }
        input[type=text], input[type=search], textarea, select { width: 100%; max-width: 36rem; padding: 0.25rem; }
        button { margin-top: 0.75rem; padding: 0.4rem 1rem; }
        code { overflow-wrap: anywhere; }
        form.choose { margin: 0.5rem 0 1rem; }
        dl.counts { display: grid; grid-template-columns: max-content auto; gap: 0.25rem 1rem; }
        dl.counts dt { font-weight: 600; } dl.counts dd { margin: 0; }
        form.zone { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem; }
        form.zone label { display: inline; } form.zone input[type=text] { width: 14rem; } form.zone button { margin-top: 0; }
        .rel { color: #666; font-size: 0.9em; } .note { font-style: italic; }
        table.timeline tr.now td { font-weight: 700; border-top: 3px solid #1a73e8; border-bottom: 3px solid #1a73e8; }
        .state { font-weight: 600; } .state.refused, .state.unreachable, .state.failed { color: #b3261e; }
        .state.accepted, .state.done { color: #1e7e34; } .state.pending { color: #8a6d00; }
        .verdict { border: 2px solid; border-radius: 6px; padding: 0.5rem 1rem; margin: 1rem 0; }
        .verdict .state { font-size: 1.5rem; font-weight: 700; margin: 0; } .verdict ul { margin: 0.25rem 0; }
        .verdict.healthy { border-color: #1e7e34; } .verdict.healthy .state { color: #1e7e34; }
        .verdict.degraded { border-color: #b3261e; } .verdict.degraded .state { color: #b3261e; }
        .verdict.paused { border-color: #8a6d00; } .verdict.paused .state { color: #8a6d00; }
        .charts { display: flex; flex-wrap: wrap; gap: 1rem; } figure.chart { margin: 0; } figure.chart svg { max-width: 100%; height: auto; }
        figure.chart figcaption { font-weight: 600; } ul.legend { list-style: none; padding: 0; margin: 0.25rem 0; font-size: 0.9em; }
        .problem { border-left: 4px solid #b3261e; padding: 0.5rem 1rem; background: #b3261e14; }
        """
}
