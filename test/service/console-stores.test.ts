import { openDb } from "../../service/store/db";
import { describeConsoleStores } from "../helpers/console-store-suite";

describeConsoleStores("PGlite", () => openDb({}));
