// The word pieces of trajflow's tokenizer, version 1: every multi-character piece (see pieces.ts) that
// the built-in environments' prompts, observations and actions use, collected over 300 seeds each.
// Anything else falls back to one token per UTF-8 byte, so every text still tokenizes. The list is
// frozen: changing it changes token ids and invalidates checkpoints, so a new list is a new version
// (TOKENIZER_NAME). test/tokenizer/word-pieces.unit.spec.ts checks the built-in environments need no fallback.
export const WORD_PIECES_V1: readonly string[] = Object.freeze([
  " 0", " 1", " 2", " 3", " 4", " 5", " 6", " 7", " 8", " 9", " A", " Analyze", " Avoid", " Based", " Choose",
  " Down", " Dragon", " Each", " Frozen", " G", " Goal", " How", " It", " Its", " Left", " Maximize", " Mia",
  " Museum", " O", " P", " Phoenix", " Reaching", " Right", " Rules", " S", " Sokoban", " There", " Up", " X",
  " You", " a", " action", " actions", " adult", " adults", " all", " among", " an", " and", " another", " answer",
  " are", " arithmetic", " arm", " arms", " at", " average", " away", " bakery", " bakes", " bandit", " behave",
  " between", " bike", " box", " boxes", " by", " calc", " calculator", " can", " cannot", " cards", " characters",
  " child", " children", " choosing", " collect", " command", " cost", " direction", " directions", " distribution",
  " do", " does", " dollars", " e", " each", " earns", " edge", " empty", " ends", " episode", " equally", " every",
  " exactly", " falling", " final", " for", " format", " friend", " friends", " from", " frozen", " game", " give",
  " gives", " goal", " group", " guess", " has", " have", " higher", " hole", " holes", " hour", " hours", " how",
  " ice", " in", " inside", " intended", " into", " is", " it", " its", " km", " leaves", " left", " like",
  " likely", " many", " map", " may", " meaning", " might", " more", " most", " move", " moving", " muffins",
  " name", " named", " names", " need", " next", " now", " of", " off", " on", " once", " one", " or", " otherwise",
  " output", " own", " parentheses", " pay", " pays", " pens", " per", " perpendicular", " player", " playing",
  " points", " probability", " problem", " pull", " push", " puzzle", " reaches", " reasoning", " related",
  " result", " reward", " rewards", " right", " runs", " same", " saves", " sells", " separated", " shared", " she",
  " shown", " slippery", " solving", " spends", " store", " symbolic", " symbolism", " target", " targets", " the",
  " their", " then", " think", " through", " tickets", " tile", " to", " tool", " total", " train", " travel",
  " travels", " trays", " turn", " turns", " two", " up", " walk", " wall", " week", " weeks", " when", " where",
  " which", " with", " word", " wrong", " you", " your", "Actions", "Answer", "Calculator", "Down", "Dragon", "Each",
  "Game", "Lake", "Left", "Moving", "Phoenix", "Problem", "Rewards", "Right", "Symbols", "The", "Up", "When", "You",
  "answer", "armed", "calc", "expression", "final", "infer", "number", "numbers", "think", "your", "√",
]);
