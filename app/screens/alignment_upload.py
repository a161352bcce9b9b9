"""The Alignment page's "your test file" section: upload `source<TAB>target[<TAB>gold]` (any number of lines, up to
the size cap the page states), rank every head by AER and name the best head and method (with gold), or show how
much the heads agree (without); the sentences worst first, one opened as links and a word matrix with its gold; the
breakdown of the errors; download the predicted links as Pharaoh.

Compute lives in model/analysis/alignment/uploads.py (through app.services, kept per model and file): the file is
read as a stream with a progress bar, only counts are kept, and the sentence opened is aligned again on its own.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st
from attention_lens.app import services, state, uploads
from attention_lens.app.render import alignment_breakdown as bd_render
from attention_lens.app.render import alignment_svg as svg
from attention_lens.app.render.alignment_agreement import agreement_figure
from attention_lens.app.screens import charts
from attention_lens.app.services import alignment as al

K_FILE, K_SENT, K_HEAD, K_RANK = "align_upload", "align_upload_sentence", "align_upload_head", "align_upload_rank"
K_WORST = "align_upload_worst"
K_USE_BEST = "align_upload_use_best"
K_EXPLORE_GOLD = "explore_gold"  # {model, source, target, gold, reading}: Explore draws these links
K_GO_EXPLORE = "align_go_explore"  # set by the button's on_click: switch to Explore on this run
TABLE_ROWS = 5000  # sentences listed in the table (the worst first); the file's figures count every sentence
HELP = ("One sentence pair per line: `source<TAB>target`, optionally `<TAB>gold` with Pharaoh links over the "
        "whitespace words (`i-j` sure, `i?j` possible, 0-based, source index first), as in "
        "`python -m model align --data`.")


def has_test_split(engine) -> bool:
    """Whether a gold test split ships for the model: not for a model of real (typed) text, whose gold would need
    people to write it, nor for a pair without assets/data/PAIR.test.tsv."""
    pair = engine.card.get("pair")
    return (state.text_kind(engine.card) != "raw" and bool(pair)
            and (state.ROOT / "assets" / "data" / f"{pair}.test.tsv").is_file())


def _head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def _pick_ranked_head() -> None:
    """A row clicked in the ranking opens that head below."""
    rows = st.session_state[K_RANK].selection.rows
    ranking = st.session_state.get(K_RANK + "_order", [])
    if rows and rows[0] < len(ranking):
        st.session_state[K_HEAD] = ranking[rows[0]]


def _tau(method: al.Method) -> str:
    return f" τ={method.threshold:g}" if method.extract == "threshold" and method.threshold is not None else ""


def _ranking(report: al.UploadReport, method: al.Method, engine, use_method=None) -> None:
    """The best method and head on the file, and every head ranked read with `method`'s extraction and reading;
    `use_method(m)` (a widget callback) sets the page's extraction and reading to those of `m`."""
    tally = report.tally
    best, best_head = report.best_method, report.best_head()
    c = tally[best]
    st.success(f"Best method on your {tally.n} sentences with gold: **{best.name}** (AER {c.aer:.3f}, precision "
               f"{c.precision:.0%}, recall {c.recall:.0%}). Best single head: **layer {best_head.layer} · head "
               f"{best_head.head}** read as `{best_head.name}` (AER {tally[best_head].aer:.3f}). Chosen and scored "
               f"on the same sentences, so the figures are optimistic.")
    rows = []
    for layer in range(1, engine.n_decoder_layers + 1):
        for head in range(1, engine.n_heads + 1):
            m = al.Method(method.extract, method.reading, layer, head, method.threshold)
            k = tally[m]
            rows.append({"head": _head_name(layer, head), "method": m.name, "layer": layer, "head #": head,
                         "AER": k.aer,
                         "precision": k.precision, "recall": k.recall})
    table = pd.DataFrame(rows).sort_values("AER", kind="stable").reset_index(drop=True)
    st.session_state[K_RANK + "_order"] = list(table["head"])
    read_as = f"`{method.extract}`{_tau(method)}, `{method.reading}` reading"
    if (method.extract, method.reading, _tau(method)) == (best.extract, best.reading, _tau(best)):
        st.markdown(f"Every head ranked by AER read as the best method reads ({read_as}). Click a row to open that "
                    f"head below.")
    else:
        st.markdown(f"Every head ranked by AER read with the extraction and reading set at the top of the page "
                    f"({read_as}), not as the best method reads (`{best.extract}`{_tau(best)}, `{best.reading}` "
                    f"reading). Click a row to open that head below.")
        if use_method is not None:
            st.button(f"Rank with the best method's extraction and reading ({best.extract}{_tau(best)}, "
                      f"{best.reading})", key=K_USE_BEST, on_click=use_method, args=(best,))
    st.dataframe(table, hide_index=True, key=K_RANK, on_select=_pick_ranked_head, selection_mode="single-row",
                 height=min(36 * (len(table) + 1), 360), column_config={
                     "AER": st.column_config.NumberColumn(format="%.3f"),
                     "precision": st.column_config.NumberColumn(format="%.3f"),
                     "recall": st.column_config.NumberColumn(format="%.3f")})
    if K_HEAD not in st.session_state:
        st.session_state[K_HEAD] = _head_name(best_head.layer, best_head.head)


def _agreement(report: al.UploadReport, method: al.Method, engine) -> None:
    st.info("No gold links in the file: the links are shown, but no head can be scored. Instead: how much the "
            "heads agree with each other (2·|A∩B| / (|A|+|B|) over your sentences, i.e. 1 − AER of one head "
            "against the other; heads that agree with many others often align).")
    labels = [_head_name(li, hi) for li in range(1, engine.n_decoder_layers + 1)
              for hi in range(1, engine.n_heads + 1)]
    matrix = report.agreement(method, engine.n_decoder_layers, engine.n_heads)
    st.plotly_chart(agreement_figure(matrix, labels, title=f"Agreement between heads · {method.extract} · "
                                                           f"{method.reading}"),
                    key="align_agreement", theme=None, config={"displayModeBar": False})
    mean = (matrix.sum(axis=1) - 1) / max(len(labels) - 1, 1)
    st.caption(f"Head agreeing most with the others: {labels[int(mean.argmax())]} (mean agreement "
               f"{mean.max():.2f}).")


def _head_method(method: al.Method, engine) -> al.Method:
    """The head chosen here read with the extraction and reading chosen above: the method the table of
    sentences, the drawing, the breakdown and the download use."""
    heads = [_head_name(li, hi) for li in range(1, engine.n_decoder_layers + 1) for hi in range(1, engine.n_heads + 1)]
    if st.session_state.get(K_HEAD) not in heads:
        st.session_state[K_HEAD] = heads[0]
    name = st.selectbox("Head", heads, key=K_HEAD, width=200,
                        help="The head read as the alignment below (the ranking's click chooses it too).")
    layer, head = (int(x) for x in name[1:].split("H"))
    return al.Method(method.extract, method.reading, layer, head, method.threshold)


def _open_worst() -> None:
    """A row clicked in the table of sentences opens that sentence below."""
    rows = st.session_state[K_WORST].selection.rows
    order = st.session_state.get(K_WORST + "_order", [])
    if rows and rows[0] < len(order):
        st.session_state[K_SENT] = order[rows[0]]


def sentence_table(report: al.UploadReport, m: al.Method, rows: int = TABLE_ROWS) -> pd.DataFrame:
    """One row per sentence with gold (the `rows` worst): its counts and ratios under `m`, worst (highest AER)
    first, ties in line order; `line` is the file's line number."""
    c = report.counts(m)  # line, sure, possible, predicted, hits_sure, hits_possible
    line, sure, predicted, hits_sure, hits_possible = c[:, 0], c[:, 1], c[:, 3], c[:, 4], c[:, 5]
    total = predicted + sure
    aer = np.where(total > 0, 1.0 - (hits_sure + hits_possible) / np.maximum(total, 1), 0.0)
    order = np.lexsort((line, -aer))[:rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, hits_possible / np.maximum(predicted, 1), 0.0)
        recall = np.where(sure > 0, hits_sure / np.maximum(sure, 1), 0.0)
    return pd.DataFrame({"line": line[order] + 1, "AER": aer[order], "precision": precision[order],
                         "recall": recall[order], "sure": sure[order], "predicted": predicted[order],
                         "right": hits_possible[order],
                         "source": [report.example(int(k)).source for k in line[order]]})


def _worst(report: al.UploadReport, m: al.Method) -> None:
    table = sentence_table(report, m)
    st.session_state[K_WORST + "_order"] = [int(x) - 1 for x in table["line"]]
    scored = report.tally.n if report.tally is not None else 0
    shown = (f"{len(table):,} sentences with gold" if len(table) == scored else
             f"the {len(table):,} worst of the {scored:,} sentences with gold")
    st.markdown(f"**Sentences, worst first** · `{m.name}` · {shown} (a column's header sorts by it; click a row "
                f"to open that sentence below; `line` is the line of your file). The file's AER is from the summed "
                f"counts, not the mean of these.")
    st.dataframe(table, hide_index=True, key=K_WORST, on_select=_open_worst, selection_mode="single-row",
                 height=min(36 * (len(table) + 1), 320), column_config={
                     "AER": st.column_config.NumberColumn(format="%.3f"),
                     "precision": st.column_config.NumberColumn(format="%.3f"),
                     "recall": st.column_config.NumberColumn(format="%.3f"),
                     "source": st.column_config.TextColumn(width="large")})


def explore_gold(model_key: str, ex, gold: str, m: al.Method) -> None:
    """Explore on this sentence, teacher-forced, on this head, with its gold links in session state
    (`explore_gold`) for Explore to draw over the cross-attention (explore.url.apply takes the rest). A button's
    on_click: it sets the page's widget keys (the sidebar's `model`...), which a script run may change only before
    those widgets are drawn; the page itself is switched afterwards (go_explore)."""
    from attention_lens.app.screens.explore import controls as ctl
    from attention_lens.app.screens.explore import url

    ss = st.session_state
    ss[url.K_NOTICES] = url.apply({"model": model_key, "text": ex.source, "target": ex.target,
                                   "mode": "teacher_forced", "kind": "cross", "view": "head",
                                   "layer": str(m.layer), "head": str(m.head)})
    ss[K_EXPLORE_GOLD] = {"model": model_key, "source": ex.source, "target": ex.target, "gold": gold,
                          "reading": m.reading}
    ss.setdefault(url.K_PRESET_SEEN, url.LINKED)
    ss[url.K_READ] = True
    for widget in (ctl.K_KIND, ctl.K_VIEW, ctl.K_LAYER, ctl.K_HEAD):
        ss.pop(widget, None)
    ss[K_GO_EXPLORE] = True


def go_explore() -> None:
    """Switch to Explore once explore_gold (a button's on_click) has set it up."""
    if st.session_state.pop(K_GO_EXPLORE, False):
        st.switch_page("screens/explore/page.py")


def sentence_choices(report: al.UploadReport) -> list[int]:
    """The sentences the page offers to open (0-based lines): the table's, worst first, when the file has gold;
    else the first TABLE_ROWS aligned, in file order; the one open stays offered."""
    order = st.session_state.get(K_WORST + "_order") if report.tally is not None else None
    kept = list(order) if order else report.aligned_lines(TABLE_ROWS)
    chosen = st.session_state.get(K_SENT)
    if isinstance(chosen, int) and chosen not in kept and chosen in set(report.aligned_lines()):
        kept.insert(0, chosen)
    return kept


def _sentence(model_key: str, report: al.UploadReport, m: al.Method) -> None:
    """One sentence of the file (aligned again on its own) with the chosen head drawn as links and as a word matrix
    with its gold."""
    kept = sentence_choices(report)
    if st.session_state.get(K_SENT) not in kept:  # a new file: its first (worst) sentence
        st.session_state[K_SENT] = kept[0]
    sources = {k: report.example(k).source for k in kept}
    k = st.selectbox("Sentence of your file", kept, key=K_SENT,
                     format_func=lambda i: f"{i + 1}: {sources.get(i, '')[:70]}",
                     help="Numbered by the line of your file. The table above opens its rows here too.")
    wa = services.uploaded_sentence(model_key, report, k)
    if wa is None:
        st.warning(f"Line {k + 1} could not be aligned with this model.")
        return
    links = m.links(wa)
    gold = report.gold(k)
    sure, possible = (gold.sure, gold.possible) if gold else (None, None)
    if gold:
        r = al.scores(links, gold)
        st.caption(f"{m.name} on sentence {k + 1}: AER {r['aer']:.2f} · precision {r['precision']:.0%} · "
                   f"recall {r['recall']:.0%}")
    weights = wa.matrix(m.reading, m.layer, m.head)
    charts.svg(svg.links_svg(wa.source_words, wa.target_words, links, sure, possible, weights=weights,
                             title=f"Sentence {k + 1} · layer {m.layer} · head {m.head} · {m.reading} reading"),
               "align_upload_links")
    charts.svg(svg.matrix_svg(weights, wa.source_words, wa.target_words, links, sure, possible,
                              title=f"Sentence {k + 1} · word matrix · L{m.layer}H{m.head} · {m.reading}"),
               "align_upload_matrix")
    if gold:
        st.caption("Word matrix with the gold: a dot on a square is a sure link found (hit), a dot on a diamond a "
                   "possible one, a dot on neither a wrong link, a square without a dot a sure link missed.")
        ex = report.example(k)
        st.button("Open this sentence on Explore (teacher forced, this head, gold links drawn)",
                  key="align_upload_explore", on_click=explore_gold, args=(model_key, ex, ex.gold, m))
        go_explore()


def _breakdown(report: al.UploadReport, m: al.Method) -> None:
    st.markdown(f"**Where the errors are** · `{m.name}`")
    try:
        summary = report.breakdown(m)
    except ValueError as exc:
        st.error(state.text(exc))
        return
    bd = summary["breakdown"]
    cols = st.columns(2)
    for k, group in enumerate(("frequency", "token_class", "length", "distance")):
        title = bd_render.TITLES[group] + (f" (in the {bd['frequency_counts']} counts)" if group == "frequency"
                                           else "")
        with cols[k % 2]:  # charts.svg: st.html alone would strip the <svg>
            charts.svg(bd_render.bars_svg(bd[group], title), f"align_breakdown_{group}")
    st.caption(f"A link counts in the group of its source word (frequency band, class: punctuation, number, "
               f"capitalised, split into several pieces, one of the {bd['function_words']} most frequent words as "
               f"a function word), of its sentence's length, or of its distance from the diagonal. Precision: of the "
               f"links drawn there, the share that are gold; recall: of the sure gold links there, the share drawn.")
    om = summary["omissions"]
    if om["source_words"]:
        words = ", ".join(f"{state.text(w['word'])} ({w['count']})" for w in om["words"][:15]) or "none"
        st.markdown(f"**Omissions**: {om['omitted']} of {om['source_words']} source words "
                    f"({om['rate']:.1%}) have no link and together receive less than {om['threshold']:g} of one "
                    f"target word's attention over the whole output (mean of every head): {words}.")
    if summary["sinks"].get("heads"):
        charts.svg(bd_render.sinks_svg(summary["sinks"]), "align_breakdown_sinks")


def first_sentences(text: str, n: int) -> str:
    """The file's lines up to its n-th sentence (blank lines kept, so line numbers stay the file's)."""
    out, seen = [], 0
    for line in text.splitlines(keepends=True):
        if seen == n:
            break
        out.append(line)
        seen += bool(line.strip())
    return "".join(out)


K_SHIPPED, K_SHIPPED_N = "align_shipped", "align_shipped_n"  # the test split's sentences: shown, how many
SHIPPED_N = (100, 200, 500, 1000)


def shipped_view(model_key: str, engine, method: al.Method) -> None:
    """Without a file, the shipped test split gets what a file gets: its sentences worst first under the head
    chosen here, a sentence's links and word matrix with its gold (and Explore with the gold drawn), and the
    breakdown of the errors, on its first N sentences (aligned as an upload is: services.uploaded_alignment)."""
    data = state.ROOT / "assets" / "data" / f"{engine.card.get('pair')}.test.tsv"
    if not st.checkbox(f"Sentences of the test split ({data.name}), worst first, with the breakdown", key=K_SHIPPED,
                       help="What an uploaded file with gold gets, on the shipped test split's first sentences."):
        return
    n = st.selectbox("Sentences of the test split", SHIPPED_N, key=K_SHIPPED_N, width=260)
    text = first_sentences(data.read_text(encoding="utf-8"), n).encode("utf-8")
    report = aligned_with_progress(model_key, text)
    if report.tally is None:
        st.error("No sentence of the test split could be aligned with this model"
                 + (f": {state.text(next(iter(report.skipped.values())))}" if report.skipped else "."))
        return
    st.caption(f"{report.n_aligned} of {report.n} sentences of {data.name} aligned"
               + (f" ({report.n_skipped} left out)" if report.n_skipped else "") + ".")
    best = report.best_head()
    st.session_state.setdefault(K_HEAD, _head_name(best.layer, best.head))  # opens on its best single head
    export = _head_method(method, engine)
    _worst(report, export)
    _sentence(model_key, report, export)
    _breakdown(report, export)


def aligned_with_progress(model_key: str, data: bytes) -> al.UploadReport:
    """The file aligned by every method (services.uploaded_alignment, kept per model and file), with a progress
    bar while it runs: sentences done, the rate and the time left."""
    bar = st.empty()
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / max(total, 1), 1.0),
                     text="Aligning your file with every head: " + al.uploads.progress_text(
                         done, total, time.perf_counter() - started))

    report = services.uploaded_alignment(model_key, uploads.upload_digest(data), data, progress)
    bar.empty()
    return report


def upload_view(model_key: str, engine, method: al.Method, use_method=None) -> None:
    st.subheader("Your test file")
    up = st.file_uploader(f"Upload a TSV: source, target, and gold links if you have them (the whole file is "
                          f"read, any number of lines, {uploads.UPLOAD_CAP_TEXT})", type=["tsv", "txt"], key=K_FILE,
                          help=HELP, max_upload_size=uploads.UPLOAD_SEEN_MB)
    if up is None:
        st.caption("Without a file, the ranking below uses the shipped test split of the model's language pair."
                   if has_test_split(engine) else
                   "No gold test split ships for this model: upload a file with gold links to rank its heads and "
                   "list its worst sentences.")
        if has_test_split(engine):
            shipped_view(model_key, engine, method)
        return
    too_big = uploads.upload_size_problem(state.text(up.name), up.size)
    if too_big:
        st.error(too_big)
        return
    data = up.getvalue()
    checked = uploads.check_upload(data)
    if checked.problems:
        more = checked.problem_count - len(checked.problems)
        listed = "\n".join(f"- {state.text(p)}" for p in checked.problems) + (f"\n- … and {more} more" if more > 0
                                                                             else "")
        st.error(f"{state.text(up.name)} cannot be used; fix these lines and upload it again:\n\n"
                 + listed.replace("&#45;", "-"))
        return
    report = aligned_with_progress(model_key, data)
    if report.n_skipped:
        shown = ", ".join(f"{k + 1}" for k in sorted(report.skipped)[:10])
        st.warning(f"{report.n_skipped} sentence(s) could not be aligned and are left out (lines {shown}): "
                   f"{state.text(next(iter(report.skipped.values())))}")
    if not report.n_aligned:
        st.error("No sentence of the file could be aligned with this model.")
        return
    st.caption(f"{report.n_aligned:,} of {report.n:,} sentences aligned · {report.n_gold:,} with gold links · the "
               f"whole file read ({up.size / 1024 / 1024:.1f} MB; files of {uploads.UPLOAD_CAP_TEXT} are read "
               f"whole) in {report.seconds:.1f} s.")
    if report.tally is not None:
        _ranking(report, method, engine, use_method)
    else:
        _agreement(report, method, engine)
    export = _head_method(method, engine)
    if report.tally is not None:
        _worst(report, export)
    _sentence(model_key, report, export)
    if report.tally is not None:
        _breakdown(report, export)
    st.download_button(f"Download the predicted links (Pharaoh, {export.name})",
                       lambda: services.uploaded_links(model_key, report, export.name),
                       file_name=f"{up.name.rsplit('.', 1)[0]}.{export.name}.align", mime="text/plain",
                       key="align_upload_download",
                       help="One line per line of your file (an empty line where it is blank or could not be "
                            "aligned), `i-j` links over your file's words, source index first. Written when "
                            "clicked: the file is aligned again for it.")
