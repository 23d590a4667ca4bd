// The prose of a Markdown page, for the docs tests: fenced code blocks become empty lines, and HTML comments and
// inline code spans are removed (or blanked to spaces, so columns and line numbers stay where they were).
export function proseOutsideCode(markdown: string, { keepColumns = false }: { keepColumns?: boolean } = {}): string {
  const blank = (text: string) => (keepColumns ? text.replace(/[^\n]/g, ' ') : '');
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      lines.push('');
    } else if (opener) {
      fence = opener;
      lines.push('');
    } else lines.push(line);
  }
  return lines
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)[\s\S]*?\1/g, blank);
}
