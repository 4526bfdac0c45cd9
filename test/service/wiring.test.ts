import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { serviceFiles } from "../../scripts/lib/architecture";
import { allRoutes } from "../../service/app";
import type { Services } from "../../service/composition";
import { PAID_READS } from "../../service/routes/paid-reads";

/**
 * The composition root wires the service through constructors the compiler checks (docs/ARCHITECTURE.md,
 * "Composition"): nowhere in service/ is the whole Services cast into being, nor a part of it (or the runner) assigned
 * after it was built. These rules read the syntax, so a cast or an assignment spelled another way is caught too.
 */

const ROOT = path.join(__dirname, "..", "..");

interface Finding {
  file: string;
  line: number;
  text: string;
}

/** Names whose properties are never assigned from outside once composed: the composed services and the runner. */
const COMPOSED = /^(services|runner)$/;
/** Services members that may be absent, each for a reason of configuration (x402 off, no SMTP_URL). */
const OPTIONAL_BY_CONFIGURATION = ["mailer", "paymentRefunder", "paymentSettler", "x402"];

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
}

function at(source: ts.SourceFile, node: ts.Node): Finding {
  return {
    file: source.fileName,
    line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
    text: node.getText().slice(0, 120),
  };
}

/** The names along a property chain (`this.services.runner` → this, services, runner). */
function chainNames(node: ts.Expression): string[] {
  if (ts.isIdentifier(node)) return [node.text];
  if (node.kind === ts.SyntaxKind.ThisKeyword) return ["this"];
  if (ts.isPropertyAccessExpression(node)) return [...chainNames(node.expression), node.name.text];
  if (ts.isElementAccessExpression(node) || ts.isNonNullExpression(node) || ts.isParenthesizedExpression(node))
    return chainNames(node.expression);
  return [];
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);

/** Casts to the whole Services (`as Services`, `as Partial<Services>`, `<Services>x`, through `unknown` or not). */
export function servicesCasts(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && /\bServices\b/.test(node.type.getText()))
      found.push(at(source, node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Assignments onto a property of the composed services or the runner (`services.x = …`, `services.runner.y ??= …`, Object.assign). */
export function lateAssignments(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind)) {
      const target = node.left;
      if (
        (ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) &&
        chainNames(target.expression).some((n) => COMPOSED.test(n))
      ) {
        found.push(at(source, node));
      }
    }
    if (ts.isCallExpression(node) && node.expression.getText() === "Object.assign" && node.arguments.length > 0) {
      if (chainNames(node.arguments[0]).some((n) => COMPOSED.test(n))) found.push(at(source, node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Public properties of the runner's classes that anyone may set (a slot to fill in later). */
export function settableSlots(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isPropertyDeclaration(node) && ts.isClassDeclaration(node.parent)) {
      const modifiers = ts.getModifiers(node)?.map((m) => m.kind) ?? [];
      const hidden =
        modifiers.includes(ts.SyntaxKind.PrivateKeyword) ||
        modifiers.includes(ts.SyntaxKind.ProtectedKeyword) ||
        ts.isPrivateIdentifier(node.name);
      if (!hidden && !modifiers.includes(ts.SyntaxKind.ReadonlyKeyword)) found.push(at(source, node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const read = (file: string) => parse(file, fs.readFileSync(path.join(ROOT, file), "utf8"));

describe("wiring the compiler can check (service/composition.ts)", () => {
  const sources = serviceFiles().map(read);

  it("the rules catch what the composition root once did: a cast into Services, slots filled in later, a field rewritten after start", () => {
    const old = parse(
      "old.ts",
      `const services = { ...stores, config } as Partial<Services> as Services;
       services.relayer = new Relayer(services);
       services.runner.relaySigner = (batch) => services.relayer.sign(batch);
       services.runner.settlement ??= services.x402;
       runner.onReorged = (txId) => forget(txId);
       Object.assign(services, { baseUrl: url });
       allRoutes({} as Services);
       const narrow = { config } as GateServices;
       this.services = services;
       class BatchRunner { relaySigner?: RelaySigner; private stopped = false; readonly log = 1; }`,
    );
    expect(servicesCasts(old).map((f) => f.line)).to.deep.equal([1, 1, 7]); // both casts of line 1
    expect(lateAssignments(old).map((f) => f.line)).to.deep.equal([2, 3, 4, 5, 6]);
    expect(settableSlots(old).map((f) => f.text)).to.deep.equal(["relaySigner?: RelaySigner;"]);
  });

  it("no file of service/ casts anything to Services", () => {
    expect(sources.flatMap(servicesCasts)).to.deep.equal([]);
  });

  it("no file of service/ assigns onto the composed services or the runner", () => {
    expect(sources.flatMap(lateAssignments)).to.deep.equal([]);
  });

  it("the runner takes what it calls out to in its constructor: no settable slot on its classes", () => {
    const runner = sources.filter((s) => /^service\/engine\/runner(-[a-z-]+)?\.ts$/.test(s.fileName));
    expect(runner.map((s) => s.fileName)).to.include("service/engine/runner.ts");
    expect(runner.flatMap(settableSlots)).to.deep.equal([]);
  });

  it("Services has no optional member but those absent by configuration (nothing is set once the service listens)", () => {
    const source = read("service/usecases/services.ts");
    const optional: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isInterfaceDeclaration(node) && node.name.text === "Services") {
        for (const member of node.members)
          if (ts.isPropertySignature(member) && member.questionToken) optional.push(member.name.getText());
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    expect(optional.sort()).to.deep.equal(OPTIONAL_BY_CONFIGURATION);
  });

  it("the paid reads the admin tool and the console price are the routes' (service/routes/paid-reads.ts)", () => {
    // Building the routes reads nothing of the service but the MCP endpoint's configuration: a stand-in does here.
    const routes = allRoutes({ config: {} } as Services);
    const paid = routes.filter((r) => r.method === "get" && r.access.key === "optional" && r.access.price);
    expect(paid.map((r) => ({ path: r.path, tier: r.access.price }))).to.deep.equal(PAID_READS);
  });
});
