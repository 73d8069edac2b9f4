"""The quiz of lesson 11: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("You shuffle the words of a sentence and run the same attention layer again, with no positions "
        "anywhere. What happens to the output of the word “dog”?",
        ("It changes, because “dog” now stands somewhere else in the sentence.", W,
         "Nothing in Q·Kᵀ, the softmax or the weighted sum knows where a word stands: the same words give "
         "the same vectors, the same scores and the same weights."),
        ("It is the same vector, in another row.", R,
         "Right: attention without positions is permutation equivariant. Shuffle the inputs and the outputs "
         "are shuffled the same way, each keeping its numbers, so “dog bites man” and “man bites dog” give "
         "the same set of outputs."),
        ("It becomes the average of all the outputs, since attention treats every position in the sentence "
         "the same way once the order is lost.", W,
         "Each output still depends on its own query: “dog” keeps its query, so its row of weights and its "
         "output are its own, just moved."),
        ("It swaps with the output of the word that took its old place in the sentence.", W,
         "The outputs follow the words, not the places: the word that took its place keeps its own output."),
        source="notebook 11, section 1"),
    ask("RoPE turns a query at position m = 7 and a key at n = 3, and their score is s. For the same query "
        "and key vectors, which positions give the score s again?",
        ("Only m = 7 and n = 3: a score depends on both positions.", W,
         "Both are turned, and two turned vectors meet at the difference of their angles: only m − n "
         "counts."),
        ("m = 3 and n = 7.", W,
         "That is the offset −4, not 4: each pair meets at the opposite angle, and the score generally "
         "changes (the explorer's curve is not symmetric)."),
        ("Any m and n with m − n = 4, such as 104 and 100.", R,
         "Right: (R_m q)·(R_n k) = q·(R_{n−m} k), so only the offset m − n matters (the notebook shows the "
         "two scores agree below 1e-12)."),
        ("Any m and n with m + n = 10, as long as both stay below the longest sequence the model was trained "
         "on, where the pairs have not turned too far.", W,
         "The sum is not what the two angles share: each pair meets at (n − m)·θ_i, whatever m + n is."),
        source="notebook 11, section 4"),
    ask("A model was trained with RoPE in the interleaved layout (RoFormer, GPT-J). You load its weights "
        "into code that pairs dimension i with i + d_head/2 (GPT-NeoX, Llama in transformers). What happens?",
        ("The scores change: other dimensions now turn together.", R,
         "Right: the same weights turn other pairs, so the numbers differ (the trap of section 5). "
         "Reordering the columns of W_Q and W_K by the convention's permutation gives the original scores "
         "back."),
        ("Nothing: a rotation keeps the lengths of the vectors, so either layout gives the same scores for "
         "the same weights.", W,
         "Both layouts keep lengths, but they turn different pairs of numbers: the angles between a query "
         "and a key change, and so do the scores."),
        ("Only the values change, since the layout decides how V is turned.", W,
         "V is never turned; the layout concerns the queries and keys."),
        ("It must be trained again from the start, because no reordering of the weights can turn one layout "
         "into the other.", W,
         "A permutation of W_Q's and W_K's columns maps one layout exactly onto the other (the notebook "
         "checks it below 1e-12); converters of checkpoints do just that."),
        source="notebook 11, section 5"),
    ask("In the order task (which came first, cat or dog?), the model without positions is right on exactly "
        "half of the held-out sequences. Why exactly half?",
        ("It has too few numbers to learn: with more layers and wider vectors, attention would find the "
         "order by itself after enough training.", W,
         "No size helps: without positions the model gives a sequence and its mirror (the same words) the "
         "same answer, whatever its weights."),
        ("Two attention layers are too few for a question about order.", W,
         "The same two layers learn it at once when they are given positions (sinusoids or RoPE)."),
        ("Training stopped too early; with a few hundred more steps its loss would fall as it did for the "
         "other two models.", W,
         "Its loss stays at ln 2, a coin toss, however long it trains: it cannot see what tells the answers "
         "apart."),
        ("Each sequence's mirror holds the same words, so both get one answer, right for only one.", R,
         "Right: the held-out sequences come in mirrored pairs (cat and dog swapped). A model blind to "
         "order sees the same set of words in both, answers both alike, and so is right on exactly one of "
         "each pair."),
        source="notebook 11, section 7"),
    ask("ALiBi adds −m_h·|i − j| to the scores of head h. Which head keeps its attention mostly on the "
        "tokens right beside each query?",
        ("The head with the smallest slope, since it changes the scores least and leaves the words to "
         "decide.",
         W, "A small slope barely lowers far scores: that head can look far away."),
        ("The head with the largest slope.", R,
         "Right: every step away costs it m_h of score, so far keys fade fast; with 8 heads the slopes run "
         "from 1/2 down to 1/256, near-sighted to far-sighted."),
        ("Every head alike: the bias is the same for all heads, only their weights W_Q and W_K differ.", W,
         "Each head has its own slope m_h: the point of ALiBi's geometric slopes is heads that look at "
         "different ranges."),
        ("None of them: ALiBi turns the queries and keys, and distance only shows through the offset.", W,
         "That is RoPE. ALiBi changes no vector: it adds a bias to the scores."),
        source="notebook 11, section 6"),
)
