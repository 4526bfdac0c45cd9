import { openDb } from "../../service/store/db";
import { describeStore } from "../helpers/store-suite";

describeStore("PGlite", () => openDb({}));
