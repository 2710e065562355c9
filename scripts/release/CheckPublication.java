import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The release checks the build runs in verify (docs/releasing.md); a single-file program, so it needs
 * nothing but the JDK.
 *
 * <pre>
 * java CheckPublication.java module ROOT MODULE_DIR   a published module's flattened POM is complete
 *                                                     and retry-bom lists the module
 * java CheckPublication.java bom ROOT BOM_DIR         retry-bom lists exactly the published modules
 *                                                     and its own flattened POM is complete
 * </pre>
 *
 * A module is published when publish.skip, read from its pom and then its parents' poms, is false.
 */
public class CheckPublication {

  private static final String GROUP_ID = "io.github.grpcretry";

  public static void main(String[] args) throws Exception {
    if (args.length != 3 || !(args[0].equals("module") || args[0].equals("bom"))) {
      System.err.println("usage: CheckPublication (module|bom) ROOT_DIR MODULE_DIR");
      System.exit(2);
    }
    Path root = Path.of(args[1]).toAbsolutePath().normalize();
    Path module = Path.of(args[2]).toAbsolutePath().normalize();
    List<String> problems = new ArrayList<>();
    checkFlattened(module.resolve("target/.flattened-pom.xml"), problems);
    Set<String> listed = bomEntries(root.resolve("retry-bom/pom.xml"), problems);
    if (args[0].equals("module")) {
      String artifactId = text(read(module.resolve("pom.xml")), "artifactId");
      if (!listed.contains(artifactId)) {
        problems.add("published module " + artifactId + " is missing from retry-bom/pom.xml");
      }
    } else {
      Set<String> published = publishedModules(root);
      for (String id : published) {
        if (!listed.contains(id)) {
          problems.add("published module " + id + " is missing from retry-bom/pom.xml");
        }
      }
      for (String id : listed) {
        if (!published.contains(id)) {
          problems.add("retry-bom/pom.xml lists " + id + ", which is not a published module"
              + " (no module of the reactor with publish.skip false)");
        }
      }
    }
    if (!problems.isEmpty()) {
      problems.forEach(p -> System.err.println("[publication] " + p));
      System.exit(1);
    }
    System.out.println("[publication] " + module.getFileName() + ": flattened POM complete"
        + (args[0].equals("bom") ? "; retry-bom lists exactly " + listed : "; listed in retry-bom"));
  }

  /** Name, description, url, licence, scm and developers are there; nothing is left to resolve. */
  static void checkFlattened(Path pom, List<String> problems) throws Exception {
    if (!Files.isRegularFile(pom)) {
      problems.add(pom + " does not exist (flatten-maven-plugin did not run)");
      return;
    }
    String raw = Files.readString(pom);
    if (raw.contains("${")) {
      problems.add(pom + " still holds an unresolved property: "
          + raw.lines().filter(l -> l.contains("${")).map(String::strip).toList());
    }
    Element project = read(pom);
    if (child(project, "parent") != null) {
      problems.add(pom + " names a parent; consumers would need the unpublished parent poms");
    }
    for (String path : List.of("name", "description", "url", "licenses/license/name",
        "licenses/license/url", "scm/url", "scm/connection", "developers/developer/name")) {
      if (text(project, path).isBlank()) {
        problems.add(pom + " has no " + path);
      }
    }
  }

  /** The artifactIds retry-bom manages; each must be one of ours, at the BOM's own version. */
  static Set<String> bomEntries(Path bom, List<String> problems) throws Exception {
    Set<String> ids = new TreeSet<>();
    Element management = child(read(bom), "dependencyManagement");
    Element dependencies = management == null ? null : child(management, "dependencies");
    if (dependencies == null) {
      problems.add(bom + " has no dependencyManagement");
      return ids;
    }
    for (Element dependency : children(dependencies, "dependency")) {
      String id = text(dependency, "artifactId");
      if (!GROUP_ID.equals(text(dependency, "groupId"))
          || !"${project.version}".equals(text(dependency, "version"))) {
        problems.add(bom + ": " + id + " must be " + GROUP_ID + " at ${project.version}");
      }
      ids.add(id);
    }
    return ids;
  }

  /** The reactor's modules (recursively) whose publish.skip resolves to false. */
  static Set<String> publishedModules(Path root) throws Exception {
    Set<String> published = new TreeSet<>();
    collect(root, published);
    return published;
  }

  private static void collect(Path dir, Set<String> published) throws Exception {
    Path pom = dir.resolve("pom.xml");
    Element project = read(pom);
    if ("false".equals(publishSkip(pom)) && !"retry-bom".equals(text(project, "artifactId"))) {
      published.add(text(project, "artifactId"));
    }
    Element modules = child(project, "modules");
    if (modules != null) {
      for (Element module : children(modules, "module")) {
        collect(dir.resolve(module.getTextContent().strip()).normalize(), published);
      }
    }
  }

  /** publish.skip as the pom or, failing that, its nearest parent on disk sets it. */
  private static String publishSkip(Path pom) throws Exception {
    for (Path current = pom; current != null && Files.isRegularFile(current); ) {
      Element project = read(current);
      String value = text(project, "properties/publish.skip");
      if (!value.isBlank()) {
        return value;
      }
      Element parent = child(project, "parent");
      if (parent == null) {
        return "";
      }
      Element relative = child(parent, "relativePath");
      String path = relative == null ? "../pom.xml" : relative.getTextContent().strip();
      if (path.isEmpty()) {
        return "";
      }
      Path next = current.getParent().resolve(path).normalize();
      current = Files.isDirectory(next) ? next.resolve("pom.xml") : next;
    }
    return "";
  }

  private static Element read(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
        .getDocumentElement();
  }

  private static String text(Element element, String path) {
    Element current = element;
    for (String name : path.split("/")) {
      current = current == null ? null : child(current, name);
    }
    return current == null ? "" : current.getTextContent().strip();
  }

  private static Element child(Element element, String name) {
    List<Element> found = children(element, name);
    return found.isEmpty() ? null : found.get(0);
  }

  private static List<Element> children(Element element, String name) {
    List<Element> found = new ArrayList<>();
    for (Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
      if (node instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }
}
