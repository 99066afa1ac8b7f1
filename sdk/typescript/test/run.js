// Runs test files with Node's test runner, with a global WebSocket where this
// Node has one only behind a flag (20.10 to 21; 22 has it, 18 has none: the
// /ws test then skips).
import { spawnSync } from "node:child_process";

const flags =
  typeof WebSocket === "undefined" && process.allowedNodeEnvironmentFlags.has("--experimental-websocket") ? ["--experimental-websocket"] : [];
const r = spawnSync(process.execPath, [...flags, "--test", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(r.status ?? 1);
