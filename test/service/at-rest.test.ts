import { openDb } from "../../service/store/db";
import { describeAtRest } from "../helpers/at-rest-suite";

describeAtRest("PGlite", () => openDb({}));
